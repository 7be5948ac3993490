// Package rediswheel is the distributed mode of timingwheel: delayed tasks
// kept in Redis, delivered at least once, never early, to any number of
// worker processes, on a single server or on Redis Cluster.
//
// It is the Redis store of package durable, whose Queue is the API on every
// store: Store (NewStore) implements durable.Store with the Lua scripts of
// lua/, one per operation, and New makes a durable.Queue on it. The other
// exported names of this package (Queue, Task, Handler, the options, the
// sentinel errors...) are durable's, under their old names (compat.go), so
// that code written before durable existed compiles unchanged. The delivery
// contract below is durable's, read with the Redis clock as the store's.
//
// # Worked example
//
// A shop wants to cancel unpaid orders 30 minutes after checkout, and to
// forget the timer once the order is paid:
//
//	q, err := rediswheel.New(client, rediswheel.Options{Namespace: "orders"})
//	...
//	// At checkout (idempotent: a retried request does not add a second task):
//	q.AddAfter(ctx, "order:1001", []byte(`{"order":1001}`), 30*time.Minute)
//	// On payment:
//	q.Cancel(ctx, "order:1001")
//	// In every worker process:
//	q.Run(ctx, func(ctx context.Context, t rediswheel.Task) error {
//		return cancelOrderIfUnpaid(ctx, t.Key) // must be idempotent
//	})
//
// Suppose checkout runs when Redis's clock reads 12:00:00.250. AddAfter
// computes the due time inside Redis, 12:30:00.250, so the caller's clock and
// time zone do not matter, and stores the key in the due set of shard
// fnv32a("order:1001") mod 16. At 12:30:00.250 by the Redis clock a worker's
// claim finds it due and leases it for Options.Lease (30s) with a new fencing
// token; a task is never claimed while Redis's clock is before its due time.
// The handler returns nil and the worker's batched ack deletes the task.
// Had the handler failed, the task would have waited a random delay of up
// to 1s (DefaultBackoff), then up to 2s, 4s..., and after 25 deliveries gone
// to the dead set with its last error, for Dead and Requeue. Had the worker
// died, the lease would have run out at 12:30:30.250 and the next claim of
// any worker would have taken the task again. Had the payment come first,
// Cancel would have deleted the task at once.
//
// # Delivery contract
//
//   - At least once. A task is deleted only after its handler returns nil
//     and the ack reaches Redis. A worker that crashes, stalls past its lease
//     or loses its ack has its tasks delivered again, so handlers must be
//     idempotent by Task.Key (HTTPHandler sends it as Idempotency-Key).
//   - Never early, by the Redis clock. Every script reads TIME; due times are
//     rounded up to the millisecond. A past due time fires at once, and an
//     outage leaves a backlog that drains in batches of at most 128 tasks per
//     script call.
//   - Idempotent Add. An existing key, in any state, makes Add return false
//     and change nothing; Replace rewrites a task that is not in flight.
//   - Final Cancel. A scheduled or dead task is deleted at once, with no
//     tombstone; a later Add of the key is a new task (with
//     Options.Retention, it is kept as cancelled until its retention ends:
//     see Retention and history). A task in flight is never retried, and its
//     handler's context is cancelled.
//   - Fenced. Each delivery has a token; an ack, retry or heartbeat with any
//     other token is rejected, so a stale worker cannot finish a task another
//     worker owns.
//   - Bounded. Retries back off (Options.Backoff, or the task's
//     TaskBackoff), a task dies after Options.MaxAttempts deliveries (or its
//     TaskMaxAttempts) or a Permanent error, and each shard keeps at most
//     Options.MaxDead dead tasks. A lease that runs out before any heartbeat
//     or settle of its delivery reached Redis may have been a lost claim
//     reply, so it is not counted, up to 3 in a row: a task that crashes its
//     worker every time still dies, at most 3 deliveries later.
//
// Not guaranteed: order between tasks due at the same time; exactly-once
// (use the key to de-duplicate); prompt delivery of an earlier task added by
// another process (an idle worker sleeps until the next due time it knows of,
// at most a second; only a call through its own Queue that makes a task due
// sooner — an Add in any form, Replace, Reschedule, Requeue or Resume — or a
// retry it schedules itself, wakes it early);
// anything at all when Redis evicts keys (see Operations).
//
// # Key layout
//
// A namespace ns with N shards uses 6 keys per shard i, all with one hash
// tag, {ns.i~s} (written {ns.i} below), so that each script touches one
// cluster slot; s is the smallest suffix that puts the slot in the middle
// half of the i-th of N equal slot ranges, so the shards of every
// namespace spread evenly over masters of equal slot ranges (the 16
// default shards on a default 3-master cluster: at most 6 on one, for any
// namespace). A namespace first used before this layout keeps its tags,
// exactly {ns.i}, as recorded in {ns.layout}: layout.go has the rule, the
// record and what holds on other slot layouts. Scripts receive every key
// in KEYS; none is built inside Lua.
//
//	key           type  members / fields                 holds
//	{ns.i}:due    ZSET  task key -> due ms              scheduled tasks and waiting retries
//	{ns.i}:lease  ZSET  task key -> lease deadline ms   tasks in flight
//	{ns.i}:dead   ZSET  task key -> ms it died          dead tasks, capped at MaxDead
//	{ns.i}:kept   ZSET  task key -> ms retention ends   finished tasks kept (Retention), capped at MaxRetained
//	{ns.i}:body   HASH  task key -> payload             every task's payload ("" once retained)
//	{ns.i}:ctl    HASH  <letter>|<task key> -> value    per-task fields, below, and the shard's
//	                                                    #token (fencing counter), #paused (Pause),
//	                                                    #retrying and #cancelled (Stats' counts per state)
//	{ns.layout}   STRING "1" or "2"                     the namespace's layout (layout.go), set at first use
//
// The per-task fields of ctl:
//
//	m|key  task record, written by Add and Replace:
//	       "added ms|original due ms|payload bytes|timeout ms|max attempts|backoff base ms|backoff limit ms|type"
//	       (0: the Queue's; the type last, it may hold '|')
//	a|key  attempts counted         t|key  current fencing token
//	x|key  cancel requested         e|key  last error
//	c|key  current delivery, "attempt|start ms|worker id", written by claim
//	h|key  delivery history, JSON [[attempt, worker, start ms, end ms, outcome, error], ...],
//	       oldest first, at most HistoryLen; an entry with a result has a 7th element,
//	       "code|truncated|base64 body" (result.go), the body at most durable.MaxResultBody
//	f|key  finished record of a retained task, "done|ms" or "cancelled|ms"
//	r|key  RetryAfter postponements in a row (a retry, Replace and Requeue delete it)
//	u|key  claims in a row no heartbeat or settle confirmed (lost replies)
//
// A task is in exactly one of due, lease, dead and kept, and has a field in
// body exactly while it is in one of them, so Add tests "exists in any
// state" (a retained task included: the uniqueness window) and stores the
// payload with one HSETNX. The shard of a key is fnv32a(key) mod N, so every
// process on a namespace must use the same Options.Shards; changing it
// strands existing tasks.
//
// # Task states
//
// A task's state is the key that holds it: scheduled or retrying in due
// (retrying once an attempt has failed), in flight in lease, dead in dead,
// done or cancelled in kept (only with Options.Retention; without it a
// finished task is deleted at once, with every field). Each move is one
// script, named after the Store call that drives it (lua/add.lua,
// reschedule.lua, claim.lua, extend.lua, settle.lua, cancel.lua,
// requeue.lua); which call moves a task from which state to which is
// durable's state table (its package doc), the reference for every store.
// settle.lua records each outcome as the Queue decided it; the cancel mark
// is x|, the postponements in a row r|.
//
// # Inspect and steer
//
// Get(ctx, key) reads one task atomically: its State (scheduled, retrying,
// in flight, dead, or done/cancelled while retained), next due time (the
// lease end when in flight), original due time, attempts, last error,
// payload size, when it was added, last started and finished, its own
// policy and its last deliveries; ErrNotFound when the key is in no state.
// A task waiting in due is retrying once it has used an attempt or carries
// a last error. List(ctx, state, cursor, limit) pages through one state
// across all shards by time in that state (due time, lease end, death, end
// of retention), then key. The opaque cursor is a position: a task that
// stays put is listed exactly once whatever changes around it; one that
// moves may be listed twice or not at all. Stats returns namespace totals,
// per-shard figures (retained tasks included) and whether any shard is
// paused.
//
// Reschedule moves a scheduled or retrying task without resending its
// payload (ErrInFlight if it runs). Pause stops claims on every shard until
// Resume; adds, cancels and running handlers go on.
//
// # Task options, routing and HTTP callbacks
//
// Add, AddAfter, Replace and AddBatch take TaskOptions stored with the
// task, so every worker applies the same policy: TaskType, TaskTimeout
// (defaulting to Options.HandlerTimeout), TaskMaxAttempts and TaskBackoff.
// A Mux sends each type to its handler, so HTTP callbacks and Go handlers
// share one namespace and one Run:
//
//	m := rediswheel.NewMux()
//	m.Handle(rediswheel.HTTPTaskType, rediswheel.HTTPHandler(nil)) // AddHTTP's tasks
//	m.HandleFunc("email", sendEmail)
//	q.Run(ctx, m.Handler)
//
// Types match exactly; "" is the type of untyped tasks, not a catch-all. A
// task whose type has no handler goes to the dead set with ErrNoHandler;
// register the handler and Requeue it. AddHTTP refuses every task net/http
// would refuse to send (over HTTP/1.1 or HTTP/2), and DecodeHTTPTask reads a
// stored one back (ErrNotHTTPTask for other payloads). A handler that returns
// RetryAfter(d), as HTTPHandler does for a 429 or 503 with Retry-After, has
// its task delivered again after d without using up an attempt, at most
// MaxPostponements times in a row; past that it counts as a failure.
//
// # Retention and history
//
// With Options.Retention, a task that finishes (done, or cancelled) is kept
// in the shard's kept set until its retention ends: its final state and
// time, attempts, last error, record and history stay readable through Get
// and List, its payload is dropped, and Add of its key stays a no-op (a
// uniqueness window). Replace starts a new task; Cancel of a retained task
// forgets it. Expired tasks are forgotten by the next settle or cancel on
// their shard (never earlier), and the oldest go early past MaxRetained;
// both trims are counted. A retained task costs about 700 bytes of Redis
// memory against about 400 for a scheduled one (10,000 tasks, 14-byte keys,
// 100-byte payloads, one history entry; Redis 7.0; REDISWHEEL_MEASURE=1 go
// test -run TestRetainedMemory).
// Dead tasks are not retained: they stay in the dead set, capped by MaxDead.
//
// Every delivery's attempt, worker (Options.WorkerID), start, end, outcome
// (done, retry, dead, release, later, cancelled, lease expired) and error is
// appended to the task's history; the newest Options.HistoryLen are kept.
//
// # Periodic tasks
//
// Periodic(ctx, name, Every(time.Minute), payload) (or any Schedule, such as
// a robfig/cron spec, evaluated in UTC) turns each time of the schedule into
// an ordinary task keyed "periodic:<name>@<unix ms>", due at that time by the
// Redis clock. Any number of processes may run the same registration: the
// schedule's position lives in Redis ({ns.periodic}:sched), so together they
// add each time once, and the next time waits in Redis one period ahead,
// surviving restarts of every worker. Times missed by under 2s run late; a
// longer outage runs once, at the latest missed time. RemovePeriodic stops
// the schedule and cancels the waiting time. A time runs twice only when a
// replica stalls for about a whole period mid-step (or dies between adding
// a time and moving the schedule past it, with no other replica stepping
// meanwhile) after the time's task has finished and been forgotten: with
// Options.Retention, not while the task is retained. A stalled replica
// reports ErrPeriodicStalled.
//
// # Stopping a worker, timeouts and errors
//
// When Run's context ends, Run claims nothing more and lets running handlers
// finish for Options.ShutdownGrace with their contexts intact and their
// leases extended. Then it cancels the rest and waits for them; a task whose
// handler then returns an error is released: due at once, its attempt not
// counted. Run returns nil after its context ends, and at once an error
// wrapping ErrUnrecoverable when Redis refuses it in a way no retry heals
// (NOAUTH/WRONGPASS, NOPERM, no EVAL/EVALSHA, not a Redis server). Other
// errors go to Options.OnError, or to slog.Default at warning level when it
// is nil, and are retried; those retrying may heal (network errors, a
// closed client, LOADING, TRYAGAIN, CLUSTERDOWN, MASTERDOWN, READONLY,
// BUSY, NOREPLICAS) wrap durable.ErrUnavailable, from every Store method
// (unavailable.go). A handler's context ends with cause
// ErrHandlerTimeout after its timeout; the delivery counts as a failed
// attempt at once even if the handler ignores its context, and the handler
// keeps its place among Concurrency until it returns.
//
// # Observing
//
// Options.Observer receives a Queue's events: tasks added, each claim and
// settle round trip, each delivery's start (with its lateness on the Redis
// clock) and end, dead and retained tasks trimmed, failed Redis calls. The
// module durable/durablemetrics turns them into Prometheus metrics, on
// every store; it is a module of its own, so importing rediswheel does not
// pull in the Prometheus client.
//
// # Costs
//
// Adds made concurrently on one Queue are group-committed: while one batch
// is on its way to Redis, the calls that arrive wait and then go out
// together. With a *redis.Client (one server) a batch is one script call
// whatever shards its tasks fall in; on a cluster it is one call per shard,
// since a script must stay in one slot (a server that answers CROSSSLOT
// makes the Queue fall back to per-shard calls for good). Per task a call
// does one HSETNX of the payload; per shard one ZADD of the due times and
// one HSET of the task records. AddBatch sends up to 256 tasks per call.
//
// Measured against asynq on one Redis 7.0 on loopback, a 2-vCPU VM, with
// every feature of this package in (docs/bench/redis.md, "Single Add: second
// attempt": 7 interleaved runs on a quiet VM, load average 0.4–1.1): 3.68×
// asynq's fires/s (median; 3.21–4.55 over the runs), lateness p99 3.7–5.1 ms
// for tasks due over 10 s, no early fire; single Add from 16 goroutines 0.89×
// asynq's adds/s (median; 0.76–1.00), at about 14 µs of Redis CPU per add,
// the same as asynq's Enqueue. On a loaded VM the ratios came out higher
// (single Add 1.13×, fires 4.34×, medians of 3 runs) because asynq slowed
// more; quote the quiet figures. AddBatch (256 tasks a call) did 3.6–5.5×
// asynq's single Enqueue on the loaded VM, and 84.9k–157k adds/s on the
// quiet one, so bulk producers should use AddBatch.
//
// A claim of 128 tasks from a 100k backlog runs 12 Redis commands and its
// ack 136, as from a backlog of 768 (TestBacklogDrainsInBoundedScripts
// asserts the equality and drains the rest in calls of at most a batch);
// Get runs 3 commands and a List page of 100 on 16 shards 332, on 10k tasks
// as on 20k (TestInspectionCost). In Redis CPU, on a loaded 2-vCPU machine
// (load average 9–10): a claim of 128 from a 100k backlog 1.1–1.2 ms, an ack
// releasing them 1.0–1.2 ms (BenchmarkClaimBacklog, -benchtime 300x -count 3).
//
// # Operations
//
//   - Run Redis with maxmemory-policy noeviction: an evicted key is lost or
//     half-deleted tasks. With noeviction a full Redis refuses Adds instead.
//   - Turn on AOF (appendonly yes) for durability; with appendfsync always
//     every acknowledged Add survives a crash, with everysec up to a second of
//     them may be lost.
//   - Watch Stats: Due and OldestDue growing means workers cannot keep up;
//     Dead growing means handlers fail; InFlight stuck at a worker's
//     Concurrency means its handlers hang (their leases keep being extended).
//   - Each idle Run makes one claim per shard per second; hundreds of idle
//     workers on many shards add up, so size Shards to the cluster (16 is
//     plenty for three masters).
package rediswheel
