module github.com/go-timingwheel/timingwheel/timerd

go 1.24

replace (
	github.com/go-timingwheel/timingwheel/rediswheel => ../rediswheel
	github.com/go-timingwheel/timingwheel/rediswheel/rwmetrics => ../rediswheel/rwmetrics
)

require (
	github.com/chromedp/cdproto v0.0.0-20250724212937-08a3db8b4327
	github.com/chromedp/chromedp v0.14.2
	github.com/go-timingwheel/timingwheel/rediswheel v0.0.0-00010101000000-000000000000
	github.com/redis/go-redis/v9 v9.22.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/chromedp/sysutil v1.1.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20250725192818-e39067aee2d2 // indirect
	github.com/gobwas/httphead v0.1.0 // indirect
	github.com/gobwas/pool v0.2.1 // indirect
	github.com/gobwas/ws v1.4.0 // indirect
	go.uber.org/atomic v1.11.0 // indirect
	golang.org/x/sys v0.34.0 // indirect
)
