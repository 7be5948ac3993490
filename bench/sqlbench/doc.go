// Package sqlbench compares the SQL stores of durable delayed tasks (sqlitewheel, pgwheel, both
// behind a durable.Queue) with River (github.com/riverqueue/river) on the same database engine, in
// one run of interleaved rounds: every round runs every system on every workload, in an order that
// turns by one system each round, so that a change in the machine's load over the run falls on all
// of them alike. Compare systems within a run only.
//
// The workloads, each on a fresh instance of its system (a new SQLite file, or a new namespace or
// River queue on the shared PostgreSQL database, whose rows are deleted afterwards):
//
//   - single: Config.Tasks tasks due in an hour, added by Config.Producers goroutines, one call per
//     task (durable Add; River Insert). Adds/s over the whole.
//   - batch: the same through batches of Config.Batch (durable AddBatch; River InsertMany).
//   - fires: Config.Tasks tasks already due, added with no worker running; then a worker starts
//     (durable Run; River Client.Start) and runs them all. Fires/s is Tasks over the time from the
//     worker's start until the store holds no unfinished task (every handler has run and its
//     settle or completion is committed), read by polling every millisecond once the last handler
//     has been called, so it is end to end, not just handler calls.
//   - lateness: a worker running, Config.LatenessTasks tasks due evenly from 1 s to 1 s +
//     Config.Spread after the first add (added in batches, all before the first is due); lateness
//     is a handler's start on this process's clock minus the due time the producer asked for. The
//     stores run on this host, so their clock (SQLite's is this process's; PostgreSQL's now() reads
//     the same system clock) is this one. Early counts handlers that started before their due
//     time: it must be 0.
//
// Both kinds of system get Config.Concurrency handler slots (durable Options.Concurrency; River
// QueueConfig.MaxWorkers) and their defaults otherwise, with two exceptions that keep the
// comparison like for like: River jobs are unique by key (UniqueOpts ByArgs on the key alone), as
// a durable Add is idempotent by key; and River's SQLite database gets sqlitewheel's durability
// (WAL, synchronous=FULL) and one connection, as riversqlite's documentation asks. River moves a
// scheduled job to its queue from a maintenance service of the elected leader every 5 s (its
// JobSchedulerIntervalDefault, not configurable), which is where its seconds of lateness come
// from; and it fetches at most once per FetchCooldown (default 100 ms), which bounds its fires/s
// at about Concurrency per 100 ms: the system "river-cooldown1ms" is River with the smallest
// FetchCooldown it accepts, on the fires workload only.
//
// Every workload checks that it measured what it names: the store holds every added task after
// the adds, every task's handler ran exactly once, and nothing is left unfinished after the fires.
package sqlbench
