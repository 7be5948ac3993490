// Package pgwheel is the PostgreSQL store of package durable: a Store is
// a durable.Store (the atomic operations of rediswheel's Lua scripts,
// written in SQL against one clock, the database's) and a
// durable.Notifier (wake-ups by LISTEN/NOTIFY), so a durable.Queue on it
// has the whole API: Add, Cancel, Run with a Handler or a Mux, Periodic,
// Get, List, Stats. Its own extras are Migrate and CheckSchema (the
// schema), AddTx and AddSQLTx (the enqueue in the caller's transaction)
// and Listen.
//
// A worked example, an unpaid order cancelled 30 minutes after checkout:
//
//	pool, _ := pgxpool.New(ctx, "postgres://...?pool_max_conns=16") // see "Pool size"
//	if err := pgwheel.Migrate(ctx, pool); err != nil { ... } // once, at deploy time
//	st, _ := pgwheel.New(pool, "orders")
//	q, _ := durable.New(st, durable.Options{Lease: 30 * time.Second})
//
//	// At checkout, in the transaction that stores the order: the order and
//	// its timer commit or roll back together.
//	tx, _ := pool.Begin(ctx)
//	tx.Exec(ctx, `INSERT INTO orders ...`)
//	st.AddTx(ctx, tx, pgwheel.NewTask{Key: "order:1001", After: 30 * time.Minute})
//	tx.Commit(ctx) // the task exists, and idle workers are woken, only now
//
//	// On payment, from any process:
//	q.Cancel(ctx, "order:1001")
//
//	// In every worker process: the task runs 30 minutes after AddTx by the
//	// database clock, never earlier, at least once, unless cancelled.
//	q.Run(ctx, func(ctx context.Context, t durable.Task) error {
//		return cancelUnpaidOrder(ctx, t.Key)
//	})
//
// Outside a transaction, q.AddAfter(ctx, "order:1001", nil, 30*time.Minute)
// does the same in one statement of its own. A task added by AddTx has the
// Queue's policy unless NewTask.Policy says otherwise (durable.Policy's
// fields are what TaskType, TaskTimeout, TaskMaxAttempts and TaskBackoff
// set).
//
// # Schema
//
// Migrate(ctx, pool) creates or upgrades the schema; nothing else does,
// and a database newer than the code is refused (ErrSchemaTooNew). The
// migrations are migrations/NNNN_*.sql, embedded, applied in one
// transaction under an advisory lock, each recorded in pgwheel_schema
// (version, applied). Version 1 (migrations/0001_init.sql documents every
// column; version 2, 0002_results_and_state_counts.sql, adds each delivery's
// result to pgwheel_delivery, and two partial indexes that version 4 drops;
// version 3, 0003_vacuum.sql, the tables' autovacuum parameters (see
// "Vacuum and retention"); version 4, 0004_counts.sql, the counts Stats
// reads; version 5, 0005_place_indexes.sql, one partial index per place):
//
//	table             key                      holds
//	pgwheel_task      (namespace, key)         every task in any state: payload, policy, attempts,
//	                                           fencing token, last error, current delivery
//	pgwheel_delivery  id; (namespace, key, id) the execution log: one row per finished delivery
//	                                           (attempt, worker, start, end, outcome, error),
//	                                           the newest HistoryLen per task
//	pgwheel_result    (namespace, key)         how a retained task finished: done or cancelled, and when
//	pgwheel_queue     namespace                paused namespaces
//	pgwheel_periodic  (namespace, name)        periodic schedules' positions (Periodic)
//	pgwheel_count     (namespace, kind)        the count of due tasks and of retrying ones, as of
//	                                           the last fold
//	pgwheel_count_delta namespace              the changes to those counts since, one row per
//	                                           statement and kind, appended by triggers
//	sequence pgwheel_token                     fencing tokens, never reused
//	function pgwheel_clock()                   the database clock, rounded down and up to the ms
//
// The log and the result reference the task with ON DELETE CASCADE:
// forgetting a task is one DELETE. One partial index per place (version 5,
// 0005_place_indexes.sql), pgwheel_task_due, _lease, _dead and _kept, each
// (namespace, at, key) WHERE place = that place, serves claims (due rows by
// time), reaps (expired leases), the dead and retention trims (oldest
// first), List's keyset pages and Stats' count of the tasks due now; a
// statement that looks a task up by its key names no place (or hides it:
// settle.go's placeOnly), so its one plan is the primary key, whatever the
// statistics. pgwheel_delivery_task serves the log's reads and trims.
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
// Each is a method of durable.Store (the Queue calls them; see its doc for
// what each does) over the SQL operations of the files named after them.
//
//   - Add (Replace too, by its requests' mode), AddTx, AddSQLTx: idempotent by key (an existing key in
//     any state, a retained one included, is left alone); Replace rewrites
//     a task not in flight, which starts over. A relative due time counts
//     from clock_timestamp() at the statement, not now() (the
//     transaction's start), rounded up; an absolute one is rounded up.
//     Every task of AddTx and AddSQLTx is validated before any is stored;
//     Add stores a call's valid requests in one transaction.
//   - Claim: reaps expired leases (bounded), then leases up to limit due
//     tasks by the clock read at its start, FOR UPDATE SKIP LOCKED: never
//     early, never the same task to two claimers, never a task of an
//     uncommitted transaction. Each delivery gets a fresh fencing token.
//   - Extend, Settle: fenced; a stale token changes nothing. Settle records
//     done, retry, dead, release and later as the Queue decided them
//     (durable's state table), logs the delivery, honours a Cancel that
//     came in flight, and trims the dead set (MaxDead, 16 per burial) and
//     retained tasks (retention over, MaxRetained).
//   - Cancel (final), Reschedule, Requeue, Pause (and resume), Get, Dead,
//     List (keyset positions), Stats: as rediswheel's, on one partition.
//   - Periodic: the periodic registry of lua/periodic.lua; of processes
//     advancing one pointer from the same value, exactly one moves it.
//   - Errors: on a database Migrate never ran on (or an older schema) every
//     operation fails with ErrSchemaTooOld, which says to run Migrate (or
//     timerd migrate). A claim failing on credentials, a missing database or
//     schema or a missing privilege wraps durable.ErrUnrecoverable, so Run
//     stops; anything else (the server down or restarting, a cut
//     connection) is retried by Run, whose pool reconnects by itself.
//
// Each operation is one transaction (AddTx and AddSQLTx join the
// caller's) at READ COMMITTED. Cost, in round trips: Add is one statement
// over arrays for up to 512 tasks, with no BEGIN or COMMIT when that is all
// it runs (Replace: two statements per task, in a transaction; AddSQLTx:
// one statement per task, for database/sql drivers); Claim is BEGIN, one
// statement reading the clock, the pause flag and the expired leases, the
// lease, a search for the next due time unless it leased its whole limit,
// COMMIT; Settle of done tasks without retention is one pipeline (one
// statement per task and a trim, one implicit transaction), any other
// Settle BEGIN, two pipelines, COMMIT. Stats is one statement reading the
// namespace's count of due tasks (a few rows: TestStatsReadsBoundedPages),
// the index ranges of the places the Queue bounds (in flight, dead,
// retained) and of the tasks due now: it grows with the tasks overdue, not
// with the backlog. Every statement that adds or removes due tasks also
// appends its change to the count (triggers: one row per statement and
// kind, no lock on a row any other writer needs), and one in 32 folds them;
// a settle of leased tasks runs none.
//
// # Wake-ups
//
// An Add or Replace that stores a task due no later than every other
// scheduled task of its namespace runs pg_notify('pgwheel', "<due ms>
// <namespace>"), as do Reschedule, Requeue and Resume; PostgreSQL delivers
// it at commit, so a rolled-back add wakes nobody. A Listener (Listen)
// receives them for one namespace. A Queue's Run listens through Notify
// (durable.Notifier) on a connection of its own, outside the pool, and
// listens again by itself after losing it, then claims what it may have
// missed: an idle worker claims a task any process adds for sooner at
// once, not PollInterval late (TestNotifyWakesAnIdleWorker,
// TestRunAcrossARestart).
// They are hints: a worker still polls.
//
// # Vacuum and retention
//
// Every move of a task is an UPDATE, and every finished task a DELETE
// (without retention) or an UPDATE then a later DELETE (with it), so the
// task table churns like any queue table. A lease or a retry changes place
// and at, which the place indexes hold, so no such UPDATE is HOT: each
// leaves a dead entry in every index, and the claims' scans of the due and
// lease ranges step over the dead entries at their heads until a vacuum
// removes them (150,000 tasks pushed through beside a backlog of 500,000:
// the claim's scan read 4 pages before, 970–2,834 after, its round trip
// 5–18× longer, until autovacuum came 14 s to over a minute later; with
// the upkeep below, within 2× at once or 1.1 s after the churn;
// docs/design/pg-churn.md, bench/sqlbench's cmd/sqlchurn).
//
// So a Run vacuums the table itself when a burst ends (upkeep.go): when a
// claim drains its namespace's due range after the Store's claims leased
// 10,000 tasks or more since the last vacuum, the Run's upkeep runs VACUUM
// (INDEX_CLEANUP ON, SKIP_LOCKED, TRUNCATE OFF) pgwheel_task on a
// connection of its own, one process at a time (an advisory lock), at most
// one a tenth of the time (vacuumPause, or ten times the last vacuum's
// duration). It needs the table's owner (Migrate's role, usually): for any
// other PostgreSQL skips the table with a warning, and what remains is
// autovacuum. Migration 3 sets the tables' autovacuum parameters so that
// autovacuum takes them at its next round once 1,000 rows died (or 10,000
// were inserted), whatever their size, where the server's defaults wait for
// 20% of the table (200,000 dead rows under a backlog of a million, hours at
// a low rate); its round is server-wide, autovacuum_naptime (1 min by
// default). No fillfactor: the updates of the hot path are not HOT whatever
// room a page has. No setting helps a long-running transaction anywhere in
// the database: it holds back the cleanup of every dead row version from
// its start, the upkeep's vacuum included.
//
// Where a test showed a plan depending on statistics, the statement was
// written so that it does not (claim's next-due search:
// TestNextDueIgnoresStatistics; Stats: TestStatsReadsBoundedPages; the
// lookups by key, whose one plan is the primary key since the place indexes
// are partial: TestByKeyOnAnEmptiedNamespace, TestSettleLooksUpByKey). A
// bulk load (an AddBatch of many thousands) wants an ANALYZE pgwheel_task
// after it, or the next autovacuum round: until then a claim may read the
// whole load.
//
// Retention bounds the table: finished tasks are kept
// until their retention ends and forgotten by the next Settle or Cancel
// (at most 16 plus what the call retained), the oldest first past
// MaxRetained; dead tasks past DeadCap are forgotten oldest first.
//
// # Pool size
//
// The pool is the application's, shared with the Queue's Adds, Cancels and
// reads. A Run's own operations do not use it: while a Run lasts, its
// claims, settles, heartbeat's extends and upkeep vacuum go through a pool
// of their own of up to four connections (one of each at a time), and its
// LISTEN through one more, all opened with the pool's configuration
// (runconns.go, Listener), so a Run costs the server up to five
// connections beside the application's pool. Without them a pool the
// application keeps busy makes the claims wait behind its commits, and
// tasks run late by the wait: an order service at 400 orders/s, 64
// checkouts at once each holding one of pgxpool.New's 4 connections for
// its transaction, payments cancelling timers with CancelTx and handlers
// writing through the same pool, ran its timers 6.3–7.3 s late at the
// median (p99 12.7–13.2 s) over 20 s of it; with them, 3.9–4.0 ms (p99
// 12–14 ms; TestOrderServiceOnTheDefaultPool, whose doc names the
// command). The rule for the application's pool:
//
//	MaxConns >= the connections the application holds at once + 1
//
// where the application counts everything sharing the pool: its own
// transactions (a checkout's AddTx holds one until its commit), the
// Queue's Adds and Cancels, and each handler while it writes through the
// pool (up to Concurrency). A pool short of it queues the application, not
// the Run's claims, though handlers that wait for a connection keep their
// slot of Concurrency meanwhile. New refuses a pool of fewer than
// MinPoolConns (4) connections with ErrPoolTooSmall: before a Run has
// opened its own connections (and after it closed them) its operations
// use the pool.
//
// # Differences from rediswheel
//
// Namespaces are PostgreSQL text: a NUL byte or invalid UTF-8 is refused
// with ErrNamespace; error texts and worker ids are cleaned instead. Keys,
// task types and periodic names are text too, but the Queue refuses what
// text cannot hold on every store alike (durable.ErrKey,
// durable.ErrTaskOption, durable.ErrPeriodicName), before any store call;
// this store checks again for callers of its own methods. There are no
// shards: one namespace is one range of the index, and claimers never
// block each other.
package pgwheel
