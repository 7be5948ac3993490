package rediswheel_test

import (
	"context"
	"log"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// Every worker process runs the same two lines: the report is sent once an
// hour, on the hour (UTC), however many processes run them, and keeps its
// hours while they restart. For a cron spec, pass a robfig/cron Schedule.
func ExampleQueue_Periodic() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	q, err := rediswheel.New(client, rediswheel.Options{Namespace: "reports"})
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	go func() {
		err := q.Periodic(ctx, "hourly-report", rediswheel.Every(time.Hour), []byte(`{"report":"sales"}`))
		log.Print(err) // nil when ctx ends; ErrPeriodicRemoved after RemovePeriodic
	}()
	q.Run(ctx, func(ctx context.Context, t rediswheel.Task) error {
		// t.Key is "periodic:hourly-report@<Unix ms of the hour>": an
		// idempotency key for the report of that hour.
		return nil
	})
}
