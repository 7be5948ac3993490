package rediswheel

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	"github.com/redis/go-redis/v9"
)

// A Mux lets HTTP callbacks and Go handlers share one namespace and one Run.
func ExampleMux() {
	client := redis.NewClient(&redis.Options{Addr: "localhost:6379"})
	q, err := newTQ(client, Options{Namespace: "orders"})
	if err != nil {
		panic(err)
	}
	m := NewMux()
	m.Handle(HTTPTaskType, HTTPHandler(nil))
	m.HandleFunc("cancel-order", func(ctx context.Context, t Task) error {
		fmt.Printf("cancelling order %s\n", t.Payload)
		return nil
	})
	// Tasks added before types existed have the type "": route them too, or they go to the
	// dead set with ErrNoHandler.
	m.HandleFunc("", func(ctx context.Context, t Task) error { return nil })

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := q.Run(ctx, m.Handler); err != nil {
		panic(err)
	}
}
