package rediswheel_test

import (
	"context"
	"errors"
	"log"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// A worker process: it stops on SIGTERM, giving running handlers 20 seconds
// to finish before their tasks are released to other workers; each handler
// may run at most a minute; a receiver that says "not now" postpones the
// task without using an attempt; and a Redis that will never serve this
// worker (wrong password, scripting disabled) ends the process.
func ExampleQueue_Run() {
	addr := os.Getenv("REDISWHEEL_ADDR")
	if addr == "" {
		return
	}
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()
	q, err := rediswheel.New(client, rediswheel.Options{
		Namespace:      "example",
		ShutdownGrace:  20 * time.Second,
		HandlerTimeout: time.Minute,
	})
	if err != nil {
		log.Fatal(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() { time.Sleep(100 * time.Millisecond); stop() }() // for the example: stop at once

	errBusy := errors.New("receiver busy")
	send := func(ctx context.Context, payload []byte) error { return nil }
	err = q.Run(ctx, func(ctx context.Context, t rediswheel.Task) error {
		if err := send(ctx, t.Payload); errors.Is(err, errBusy) {
			return rediswheel.RetryAfter(30 * time.Second)
		} else if err != nil {
			return err // retried after the backoff; counts an attempt
		}
		return nil
	})
	if errors.Is(err, rediswheel.ErrUnrecoverable) {
		log.Fatal(err)
	}
}
