// Package durablemetrics exports a durable Queue's work as Prometheus
// metrics, on any store. It is a module of its own, so that neither durable
// nor a store pulls in the Prometheus client.
//
// A Metrics is both the Queue's Observer, which counts events as they happen,
// and a prometheus.Collector, which reports those counts and, at each
// scrape, the tasks per state read from the store:
//
//	m := durablemetrics.New("orders")
//	q, err := durable.New(store, durable.Options{Observer: m.Observer()})
//	...
//	m.WatchStats(q)
//	prometheus.MustRegister(m)
//	http.Handle("/metrics", promhttp.Handler())
//
// Every metric carries the constant label namespace="orders" (any name: the
// store's namespace is the natural one), so the Metrics of several Queues can
// share one registry. The metrics, all named durable_*:
//
//	tasks_added_total{mode}            counter   tasks stored by Add, AddAfter, AddBatch (mode="add") or Replace (mode="replace")
//	tasks_fired_total                  counter   deliveries started (a retried task fires once per attempt)
//	tasks_settled_total{result}        counter   finished deliveries by what became of the task: done, retried, dead, cancelled, released, postponed, rejected
//	dead_tasks_trimmed_total           counter   dead tasks dropped because their partition held more than MaxDead
//	retained_tasks_trimmed_total       counter   retained tasks forgotten: retention over, or their partition over MaxRetained
//	store_errors_total{op}             counter   failed store calls: add, claim, settle, extend, stats
//	lateness_seconds                   histogram how long after its due time each delivery started, by the store's clock
//	handler_duration_seconds{outcome}  histogram from the handler's start (not the claim: a wait for a Flow key is not counted) to its return, by outcome: done, retry, dead, release, later, detach
//	deliveries_total{outcome,status_class,origin}
//	                                   counter   finished deliveries by outcome (as above), status class of the Result code (2xx, 3xx, 4xx, 5xx, none) and origin
//	breakers_open{origin}              gauge     Flow breakers open in this process: 1 while open, 0 once closed
//	claim_duration_seconds             histogram successful claim round trips
//	settle_duration_seconds            histogram successful settle round trips
//	tasks{state}                       gauge     tasks per state at scrape time, the six of durable.State: scheduled, retrying, in_flight, dead, done, cancelled (needs WatchStats)
//	tasks_due                          gauge     scheduled and retrying tasks due now, waiting for a worker (needs WatchStats)
//	oldest_due_seconds                 gauge     how long the oldest due task has waited past its due time (needs WatchStats)
//	paused                             gauge     1 while claims are stopped on any partition by Pause, else 0 (needs WatchStats)
//
// The origin label is bounded (MaxOrigins, origin.go): the first
// DefaultMaxOrigins origins seen keep series of their own, the rest are
// counted as origin="other", and a task with no origin (not an HTTP task,
// OriginKey) as origin="none". 10,000 destinations make at most 21 series
// per outcome and status class.
//
// The state label spells StateInFlight "in_flight", as timerd's API does: a
// label value with a space is legal but awkward in a query.
//
// The counters count what this process's Queues did; sum them over
// processes. The gauges read the whole namespace from the store, so every
// process reports the same values: aggregate them with max, not sum.
package durablemetrics
