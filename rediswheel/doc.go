// Package rediswheel is the distributed mode of timingwheel: delayed tasks
// kept in Redis, delivered at least once, never early, to any number of
// worker processes, on a single server or on Redis Cluster.
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
//     tombstone; a later Add of the key is a new task. A task in flight is
//     never retried, and its handler's context is cancelled.
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
// at most a second; only an Add, Replace or Requeue through its own Queue,
// or a retry it schedules itself, wakes it early);
// anything at all when Redis evicts keys (see Operations).
//
// # Key layout
//
// A namespace ns with N shards uses 6 keys per shard i, all with the hash
// tag {ns.i}, so that each script touches one cluster slot and the shards of
// a namespace spread over the masters. Scripts receive every key in KEYS;
// none is built inside Lua.
//
//	key           type  members / fields                 holds
//	{ns.i}:due    ZSET  task key -> due ms              scheduled tasks and waiting retries
//	{ns.i}:lease  ZSET  task key -> lease deadline ms   tasks in flight
//	{ns.i}:dead   ZSET  task key -> ms it died          dead tasks, capped at MaxDead
//	{ns.i}:kept   ZSET  task key -> ms retention ends   finished tasks kept (Retention), capped at MaxRetained
//	{ns.i}:body   HASH  task key -> payload             every task's payload ("" once retained)
//	{ns.i}:ctl    HASH  <letter>|<task key> -> value    per-task fields, below, and the shard's
//	                                                    #token (fencing counter), #paused (Pause)
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
//	       oldest first, at most HistoryLen
//	f|key  finished record of a retained task, "done|ms" or "cancelled|ms"
//	r|key  RetryAfter postponements used
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
// script, named after the Go call that drives it:
//
//	from                          to                     script      when
//	(none)                        scheduled              add         Add, AddAfter, AddBatch, Replace
//	any but in flight             scheduled              add         Replace: attempts, history and errors start over
//	scheduled, retrying           same, new due time     reschedule  Reschedule
//	scheduled, retrying           in flight              claim       due by the Redis clock, shard not paused
//	in flight                     done (or gone)         settle      handler returned nil
//	in flight                     retrying               settle      error with attempts left; RetryAfter (not counted)
//	in flight                     scheduled, due now     settle      Run stopping: released, attempt not counted
//	in flight                     dead                   settle      Permanent error, or out of attempts
//	in flight                     retrying, due now      claim       lease expired with attempts left (reaper)
//	in flight                     dead                   claim       lease expired, out of attempts
//	in flight                     cancelled (or gone)    settle      after Cancel marked it (x|), whatever the handler returned
//	in flight                     cancelled (or gone)    claim       after Cancel marked it, lease expired
//	scheduled, retrying, dead     cancelled (or gone)    cancel      Cancel
//	in flight                     in flight, marked x|   cancel      Cancel: its handler's context is cancelled
//	dead                          scheduled, due now     requeue     Requeue: attempts start over
//	dead                          gone                   settle, claim  over MaxDead, oldest first, 16 per call
//	done, cancelled               gone                   settle, cancel  retention over, or over MaxRetained
//
// # Costs
//
// An Add is one script call: HSETNX of the payload, ZADD of the due time,
// HSET of the task record (one of each per call, whatever its tasks).
// Adds made concurrently on one Queue share pipelines; AddBatch sends one
// script call per shard for up to 256 tasks. Measured against asynq on a
// 2-vCPU VM shared with other work, Redis 7.0 on loopback, medians of three
// runs (docs/bench/redis.md): Add from 16 goroutines ~43k adds/s at ~10 µs of
// Redis CPU each; AddBatch ~91k adds/s at ~5 µs; ~28k fires/s at ~16 µs per
// task (claim and batched ack); lateness p99 ~10 ms (28 ms at worst) for
// tasks due over 10 s. Redis
// main-thread CPU, from TestBacklogDrainsInBoundedScripts on a 100k backlog:
// ~1.2 ms per claim of 128 tasks, ~1.3 ms per batched ack of 128, ~20 µs per
// task over a whole drain. No script does work that grows with the backlog.
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
