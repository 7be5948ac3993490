// Package rwmetrics exports a rediswheel Queue's work as Prometheus metrics.
// It is a module of its own, so that importing rediswheel does not pull in
// the Prometheus client.
//
// A Metrics is both the Queue's Observer, which counts events as they happen,
// and a prometheus.Collector, which reports those counts and, at each
// scrape, the tasks per state read from Redis:
//
//	m := rwmetrics.New("orders")
//	q, err := rediswheel.New(client, rediswheel.Options{Namespace: "orders", Observer: m.Observer()})
//	...
//	m.WatchStats(q)
//	prometheus.MustRegister(m)
//	http.Handle("/metrics", promhttp.Handler())
//
// Every metric carries the constant label namespace="orders", so the
// Metrics of several namespaces can share one registry. The metrics, all
// named rediswheel_*:
//
//	tasks_added_total{mode}            counter   tasks stored by Add, AddAfter, AddBatch (mode="add") or Replace (mode="replace")
//	tasks_fired_total                  counter   deliveries started (a retried task fires once per attempt)
//	tasks_settled_total{result}        counter   finished deliveries by what became of the task: done, retried, dead, cancelled, released, postponed, rejected
//	dead_tasks_trimmed_total           counter   dead tasks dropped because their shard's dead set was over MaxDead
//	retained_tasks_trimmed_total       counter   retained tasks forgotten: retention over, or their shard over MaxRetained
//	redis_errors_total{op}             counter   failed Redis calls: add, claim, settle, extend, stats
//	lateness_seconds                   histogram how long after its due time each delivery started, by the Redis clock
//	handler_duration_seconds{outcome}  histogram from the claim to the handler's return, by outcome: done, retry, dead, release, later
//	claim_duration_seconds             histogram successful claim round trips
//	settle_duration_seconds            histogram successful settle round trips
//	tasks{state}                       gauge     tasks per state at scrape time: due, scheduled, in_flight, dead, retained (needs WatchStats)
//	oldest_due_seconds                 gauge     how long the oldest due task has waited past its due time (needs WatchStats)
//	paused                             gauge     1 while claims are stopped on any shard by Pause, else 0 (needs WatchStats)
//
// The counters count what this process's Queues did; sum them over
// processes. The gauges read the whole namespace from Redis, so every
// process reports the same values: aggregate them with max, not sum.
package rwmetrics
