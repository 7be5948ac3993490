// Package sqlitewheel is the SQLite store of package durable, the embedded
// default: durable delayed tasks in one database file of one process, with
// nothing to install (modernc.org/sqlite, pure Go, no cgo). It is
// pgwheel's schema and the operations of durable.Store (durable's state
// table is the reference) in SQLite; the worker loop, Mux, HTTP tasks,
// policies, the Observer and every retry-or-dead decision are durable's.
//
//	st, err := sqlitewheel.Open(ctx, "/var/lib/app/tasks.db", sqlitewheel.Options{})
//	if err != nil { ... }
//	defer st.Close()
//	q, err := durable.New(st, durable.Options{})
//	q.AddAfter(ctx, "order:1001", payload, 30*time.Minute) // at checkout
//	q.Cancel(ctx, "order:1001")                            // on payment
//	err = q.Run(ctx, handler)                              // until ctx ends
//
// An application whose own tables live in the same file stores and cancels
// timers in its transactions: it begins them on st.DB(), the store's one
// writer connection, and calls AddTx or CancelTx with them; the order and
// its timer commit or roll back together, and idle workers wake at the
// commit (see addtx.go and ExampleStore_CancelTx).
//
// Say the order above is added at 12:00:00.000 and not paid: the task is a
// row of sqlitewheel_task, place 'due', at 12:30:00.000. Run's claim at
// 12:30:00.000 or later (never before: it compares at with the clock it
// read holding the write lock) moves it to place 'lease', at 12:30:30.000
// (the default 30 s lease), with token 1 (the first the file ever handed
// out) and attempts 1, and commits; the handler runs, and its settle
// (token 1 still current) deletes the row. Had the process been killed
// with SIGKILL mid-handler, the row would still say lease until 12:30:30;
// the first claim after the restart past that time sets it due again
// ("lease expired") and delivers it again with token 2.
//
// # Schema
//
// Open migrates a brand-new file (one holding no table) at once, so a
// program, or timerd with no store flag, needs nothing installed or run
// first. Any other file is never migrated silently: Open refuses one at an
// older version with ErrSchemaTooOld (call Migrate) and one at a newer
// version with ErrSchemaTooNew. The migrations are migrations/NNNN_*.sql,
// embedded, applied by Migrate in one transaction and recorded in
// sqlitewheel_schema (version, applied). Version 1 (migrations/0001_init.sql
// documents every column) is pgwheel's, with times as INTEGER Unix ms;
// version 2 (0002_results_and_state_counts.sql) adds each delivery's result to
// sqlitewheel_delivery and the 'retrying' and 'cancelled' rows of
// sqlitewheel_count that Stats reads:
//
//	table                 key                      holds
//	sqlitewheel_task      (namespace, key)         every task in any state: payload, policy, attempts,
//	                                               fencing token, last error, current delivery
//	sqlitewheel_delivery  id; (namespace, key, id) the execution log: one row per finished delivery
//	                                               (attempt, worker, start, end, outcome, error),
//	                                               the newest HistoryLen per task
//	sqlitewheel_result    (namespace, key)         how a retained task finished: done or cancelled, and when
//	sqlitewheel_queue     namespace                paused namespaces
//	sqlitewheel_periodic  (namespace, name)        periodic schedules' pointers
//	sqlitewheel_token     one row                  the last fencing token handed out
//	sqlitewheel_count     (namespace, place)       tasks per place, kept by triggers on sqlitewheel_task
//
// A task's place and at are pgwheel's (rediswheel's sorted set and
// score): due (scheduled, retrying; at the due time), lease (in flight;
// the lease's end), dead (when it died), kept (retained; when its
// retention ends). The log and the result reference the task ON DELETE
// CASCADE, so forgetting a task is one DELETE. One secondary index,
// sqlitewheel_task_place_at (namespace, place, at, key), serves claims,
// reaps, the trims, List's keyset pages and the next due time, each from
// one end of a range: Claim and Settle never scan the table, and the trims
// read the counts of sqlitewheel_count rather than counting rows. Only
// Stats' due-now count reads the index over the tasks due now.
//
// # Operations
//
// Every Store operation is one transaction. Writes go through one
// connection whose transactions begin IMMEDIATE, so the Queue's goroutines
// take turns in the process instead of meeting SQLITE_BUSY; each reads the
// clock (the process's, Unix ms: there is one process) once it holds the
// write lock. Reads (Get, List, Dead, Stats) use read-only connections
// that, under WAL, wait for no writer. Add stores up to 512 tasks per
// transaction; durable's group commit puts concurrent Adds in one.
//
// # Durability, WAL and checkpoints
//
// The file is in WAL mode with synchronous=FULL: a commit returns once the
// write-ahead log is fsynced, so every Add, claim and settle that returned
// survives a kill -9 of the process (TestKilledAdderLosesNoAcknowledgedAdd)
// and, as SQLite guarantees under FULL, a power loss (not tested here:
// that needs a VM to pull the plug on). synchronous=NORMAL would skip
// that fsync and survive a process crash but not a power loss; this store
// does not offer it, as the point of a durable queue is the acknowledged
// add. SQLite copies the WAL back into the database file (a checkpoint)
// when it passes 1000 pages, at a commit, and when the last connection
// closes; a reader that stays open across many commits holds the WAL back
// from restarting, which this store's short read transactions never do.
// The files are path, path-wal and path-shm: copy them together, or back
// up with VACUUM INTO. A file Open or Migrate creates has mode 0600 (its
// -wal and -shm take the same): tasks hold callback headers, receivers'
// credentials. An existing file keeps its mode.
//
// # Retention
//
// Finished tasks are deleted at once, or, with durable's Retention, kept
// (payload dropped) until their retention ends and deleted by a later
// Settle or Cancel (16 plus what that call retained at most), the oldest
// first past MaxRetained; dead tasks past MaxDead are deleted oldest first.
// Deleted pages are reused by later rows; the file does not shrink unless
// VACUUM runs.
//
// # Figures
//
// Measured on a 2-vCPU VM, ext4 disk, with
// go test -run '^$' -bench . -benchtime 2000x -count 3 ./sqlitewheel:
// single Adds 3.4-4.3k/s (one fsync each), AddBatch of 100 24-30k adds/s,
// end to end (claim, handler, settle, Concurrency 64) 7.8-9.1k fires/s.
//
// # Limits
//
// Made for one process per file; two or more on one host work (an
// overlapping restart, a tool beside the server): each write waits for the
// file's write lock as long as its context allows, never failing with
// SQLITE_BUSY (TestTwoProcessesOnOneFile: see beginWrite), and every claim
// reads the clock holding the lock, so no task is early or leased twice.
// But the processes take turns for every write, and a process's idle
// workers hear of another's Adds only at their next poll
// (durable.Options.PollInterval): for many processes use pgwheel or
// rediswheel. The
// file must be on a local disk (SQLite's locks and WAL need shared memory,
// which network file systems do not give). Partitions is 1: one writer at a
// time, whatever the number of workers.
package sqlitewheel
