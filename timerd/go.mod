module github.com/go-timingwheel/timingwheel/timerd

go 1.24

replace (
	github.com/go-timingwheel/timingwheel/rediswheel => ../rediswheel
	github.com/go-timingwheel/timingwheel/rediswheel/rwmetrics => ../rediswheel/rwmetrics
)

require (
	github.com/go-timingwheel/timingwheel/rediswheel v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.22.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
)
