package rwmetrics_test

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/redis/go-redis/v9"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/rediswheel/rwmetrics"
)

// Serves a Queue's metrics at /metrics with promhttp, runs a worker until
// one task fires, and prints the fired counter from a scrape. It needs a
// Redis server at $REDISWHEEL_ADDR, so it has no checked output.
func Example() {
	addr := os.Getenv("REDISWHEEL_ADDR")
	if addr == "" {
		return
	}
	client := redis.NewClient(&redis.Options{Addr: addr})
	defer client.Close()

	m := rwmetrics.New("example-metrics")
	q, err := rediswheel.New(client, rediswheel.Options{Namespace: "example-metrics", Observer: m.Observer()})
	if err != nil {
		panic(err)
	}
	m.WatchStats(q)
	// A registry of its own keeps the example repeatable; a program would
	// call prometheus.MustRegister(m) and serve promhttp.Handler().
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	srv := httptest.NewServer(mux)
	defer srv.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := q.AddAfter(ctx, "reminder:42", []byte("call Alice"), 0); err != nil {
		panic(err)
	}
	q.Run(ctx, func(ctx context.Context, t rediswheel.Task) error {
		cancel() // stop after the first task
		return nil
	})

	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	lines := bufio.NewScanner(resp.Body)
	for lines.Scan() {
		if strings.HasPrefix(lines.Text(), "rediswheel_tasks_fired_total") {
			fmt.Println(lines.Text()) // rediswheel_tasks_fired_total{namespace="example-metrics"} 1
		}
	}
}
