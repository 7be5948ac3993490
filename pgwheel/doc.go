// Package pgwheel keeps durable delayed tasks in PostgreSQL: the atomic
// operations of rediswheel's Lua scripts, written in SQL against one
// clock, the database's. It is the PostgreSQL store a shared worker loop
// drives (claim, extend, settle) and an application writes to (Add,
// AddTx, Cancel...); it has no worker loop of its own.
//
// Its point over Redis is the enqueue in the application's own
// transaction: AddTx (pgx) and AddSQLTx (database/sql) store a task in the
// caller's transaction, so an order and its cancellation timer commit or
// roll back together:
//
//	tx, _ := pool.Begin(ctx)
//	tx.Exec(ctx, `INSERT INTO orders ...`)
//	store.AddTx(ctx, tx, pgwheel.NewTask{Key: "order:1001", After: 30 * time.Minute})
//	tx.Commit(ctx) // the task exists, and idle workers are woken, only now
//
// # Schema
//
// Migrate(ctx, pool) creates or upgrades the schema; nothing else does,
// and a database newer than the code is refused (ErrSchemaTooNew). The
// migrations are migrations/NNNN_*.sql, embedded, applied in one
// transaction under an advisory lock, each recorded in pgwheel_schema
// (version, applied). Version 1 (migrations/0001_init.sql documents every
// column):
//
//	table             key                      holds
//	pgwheel_task      (namespace, key)         every task in any state: payload, policy, attempts,
//	                                           fencing token, last error, current delivery
//	pgwheel_delivery  id; (namespace, key, id) the execution log: one row per finished delivery
//	                                           (attempt, worker, start, end, outcome, error),
//	                                           the newest HistoryLen per task
//	pgwheel_result    (namespace, key)         how a retained task finished: done or cancelled, and when
//	pgwheel_queue     namespace                paused namespaces
//	pgwheel_periodic  (namespace, name)        periodic schedules' positions (PeriodicRegister...)
//	sequence pgwheel_token                     fencing tokens, never reused
//	function pgwheel_clock()                   the database clock, rounded down and up to the ms
//
// The log and the result reference the task with ON DELETE CASCADE:
// forgetting a task is one DELETE. One secondary index,
// pgwheel_task_place_at (namespace, place, at, key), serves claims (due
// rows by time), reaps (expired leases), the dead and retention trims
// (oldest first), List's keyset pages and Stats; pgwheel_delivery_task
// serves the log's reads and trims.
//
// A task's place is where rediswheel keeps it (its sorted set), and at is
// that set's score:
//
//	place  state                       at
//	due    scheduled, retrying         due time
//	lease  in flight                   lease deadline
//	dead   dead                        when it died
//	kept   done, cancelled (retained)  when its retention ends
//
// The state transitions are rediswheel's (its doc.go has the table): the
// same moves, the same codes, the same outcomes.
//
// # Operations and their guarantees
//
//   - Add, Replace, AddTx, AddSQLTx: idempotent by key (an existing key in
//     any state, a retained one included, is left alone); Replace rewrites
//     a task not in flight, which starts over. A relative due time counts
//     from clock_timestamp() at the statement, not now() (the
//     transaction's start), rounded up; an absolute one is rounded up.
//     Every task of a call is validated before any is stored.
//   - Claim: reaps expired leases (bounded), then leases up to Limit due
//     tasks by the clock read at its start, FOR UPDATE SKIP LOCKED: never
//     early, never the same task to two claimers, never a task of an
//     uncommitted transaction. Each delivery gets a fresh fencing token.
//   - Extend, Settle: fenced; a stale token changes nothing. Settle applies
//     done, retry (backoff delay given by the caller), dead, release and
//     later (RetryAfter) as lua/settle.lua, logs the delivery, honours a
//     Cancel that came in flight, and trims the dead set (DeadCap, 16 per
//     burial) and retained tasks (retention over, MaxRetained).
//   - Cancel (final), Reschedule, Requeue, Pause, Resume, Get, List (keyset
//     cursor), Stats: as rediswheel's.
//   - PeriodicRegister, PeriodicRead, PeriodicAdvance, PeriodicRemove: the
//     periodic registry of lua/periodic.lua; of processes advancing one
//     pointer from the same value, exactly one moves it.
//
// Each operation is one transaction (AddTx and AddSQLTx join the
// caller's) at READ COMMITTED. Cost: Add is one statement per task (two
// for Replace); Claim about five statements whatever the batch; Settle
// about three per task, in one transaction; Stats reads the namespace's
// part of the index, so it grows with the number of tasks.
//
// # Wake-ups
//
// An Add or Replace that stores a task due no later than every other
// scheduled task of its namespace runs pg_notify('pgwheel', "<due ms>
// <namespace>"), as do Reschedule, Requeue and Resume; PostgreSQL delivers
// it at commit, so a rolled-back add wakes nobody. A Listener (Listen)
// receives them for one namespace. They are hints: a worker still polls.
//
// # Vacuum and retention
//
// Every move of a task is an UPDATE, and every finished task a DELETE
// (without retention) or an UPDATE then a later DELETE (with it), so the
// task table churns like any queue table: autovacuum must keep up, and a
// long-running transaction anywhere in the database holds back the
// cleanup of every dead row version, which slows claims (they walk dead
// index entries). Retention bounds the table: finished tasks are kept
// until their retention ends and forgotten by the next Settle or Cancel
// (at most 16 plus what the call retained), the oldest first past
// MaxRetained; dead tasks past DeadCap are forgotten oldest first.
//
// # Differences from rediswheel
//
// Keys, namespaces and task types are PostgreSQL text: a NUL byte or
// invalid UTF-8 is refused with durable.ErrKey (ErrNamespace, ErrArgument); error
// texts and worker ids are cleaned instead. There are no shards: one
// namespace is one range of the index, and claimers never block each other.
package pgwheel
