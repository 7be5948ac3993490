module github.com/go-timingwheel/timingwheel/timerd

go 1.24

replace (
	github.com/go-timingwheel/timingwheel/rediswheel => ../rediswheel
	github.com/go-timingwheel/timingwheel/rediswheel/rwmetrics => ../rediswheel/rwmetrics
)
