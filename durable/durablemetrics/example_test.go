package durablemetrics_test

import (
	"context"
	"log"
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/durable/durablemetrics"
)

// Serves a Queue's metrics at /metrics. The store is any durable.Store:
// sqlitewheel.Open, pgwheel.New or rediswheel.NewStore.
func Example() {
	var store durable.Store // opened by the store's package
	m := durablemetrics.New("orders")
	q, err := durable.New(store, durable.Options{Observer: m.Observer()})
	if err != nil {
		log.Fatal(err)
	}
	m.WatchStats(q)
	prometheus.MustRegister(m)
	http.Handle("/metrics", promhttp.Handler())
	go http.ListenAndServe("127.0.0.1:9090", nil)
	log.Fatal(q.Run(context.Background(), func(ctx context.Context, t durable.Task) error { return nil }))
}
