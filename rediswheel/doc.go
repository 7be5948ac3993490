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
//   - Bounded. Retries back off (Options.Backoff), a task dies after
//     Options.MaxAttempts deliveries or a Permanent error, and each shard
//     keeps at most Options.MaxDead dead tasks.
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
// A namespace ns with N shards uses 5 keys per shard i, all with the hash
// tag {ns.i}, so that each script touches one cluster slot and the shards of
// a namespace spread over the masters. Scripts receive every key in KEYS;
// none is built inside Lua.
//
//	key           type  members / fields                    holds
//	{ns.i}:due    ZSET  task key -> due ms                 scheduled tasks and waiting retries
//	{ns.i}:lease  ZSET  task key -> lease deadline ms      tasks in flight
//	{ns.i}:dead   ZSET  task key -> ms it died             dead tasks, capped at MaxDead
//	{ns.i}:body   HASH  task key -> payload                every task's payload
//	{ns.i}:ctl    HASH  a|key attempts, t|key token,       per-task control state, and
//	                    x|key cancel requested,            the shard's token counter
//	                    e|key last error, #token
//
// A task is in exactly one of due, lease and dead, and has a field in body
// exactly while it is in one of them, so Add tests "exists in any state" and
// stores the payload with one HSETNX. The shard of a key is
// fnv32a(key) mod N, so every process on a namespace must use the same
// Options.Shards; changing it strands existing tasks.
//
// # Costs
//
// An Add is one script call: HSETNX of the payload, ZADD of the due time.
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
