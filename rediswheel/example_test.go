package rediswheel_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// Schedules a reminder, runs a worker until it fires, then stops. It needs a
// Redis server at $REDISWHEEL_ADDR, so it has no checked output.
func Example() {
	addr := os.Getenv("REDISWHEEL_ADDR")
	if addr == "" {
		return
	}
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	q, err := rediswheel.New(client, rediswheel.Options{Namespace: "example", Lease: 5 * time.Second})
	if err != nil {
		panic(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	if _, err := q.AddAfter(ctx, "reminder:42", []byte("call Alice"), 100*time.Millisecond); err != nil {
		panic(err)
	}
	q.Run(ctx, func(ctx context.Context, t rediswheel.Task) error {
		fmt.Printf("%s: %s (attempt %d)\n", t.Key, t.Payload, t.Attempt)
		cancel() // stop after the first task; Run still acks it
		return nil
	})
}

// A handler that gives up at once on errors no retry can fix.
func ExamplePermanent() {
	handler := func(ctx context.Context, t rediswheel.Task) error {
		if len(t.Payload) == 0 {
			return rediswheel.Permanent(errors.New("empty payload")) // straight to the dead set
		}
		return nil // done
	}
	_ = handler
}
