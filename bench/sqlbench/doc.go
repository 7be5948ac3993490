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
//   - lateness: a worker running for Config.Warmup, then Config.LatenessTasks tasks due evenly
//     from 1 s to 1 s + Config.Spread after the first add (added in batches, all before the first
//     is due); lateness is a handler's start on this process's clock minus the due time the
//     producer asked for. The stores run on this host, so their clock (SQLite's is this
//     process's; PostgreSQL's now() reads the same system clock) is this one. Early counts
//     handlers that started before their due time: it must be 0.
//
// Both kinds of system get Config.Concurrency handler slots (durable Options.Concurrency; River
// QueueConfig.MaxWorkers) and their defaults otherwise, with two exceptions that keep the
// comparison like for like: River jobs are unique by key (UniqueOpts ByArgs on the key alone), as
// a durable Add is idempotent by key; and River's SQLite database gets sqlitewheel's durability
// (WAL, synchronous=FULL) and one connection, as riversqlite's documentation asks. A River job due
// now or earlier is inserted without ScheduledAt (available at once, as a River user would insert
// it); a later one with ScheduledAt, as a scheduled job.
//
// How River runs a scheduled job, which is what its lateness comes from: a maintenance service of
// the elected leader (JobScheduler, every 5 s, not configurable) makes the jobs due within the next
// 5 s available ahead of time, so a job inserted after a pass and due before the next one waits
// for the next (up to 5 s late, depending on where the inserts fall between passes), and a
// worker's fetch takes available jobs whose time has come; a
// fetch follows a LISTEN/NOTIFY wake-up (an insert, or the scheduler's pass when a job it moved is
// already due) or runs every FetchPollInterval (default 1 s), and never more often than once per
// FetchCooldown (default 100 ms; "throughput is limited by this value", says its doc). The
// system "river-tuned" is River on the fires and lateness workloads with the smallest FetchCooldown
// it accepts (1 ms) and a FetchPollInterval of TunedFetchPollInterval: the settings a River user
// would turn to for throughput and promptness, at the cost of a fetch query every 50 ms per queue
// per process.
//
// Every workload checks that it measured what it names: the store holds every added task after
// the adds, every task's handler ran exactly once, and nothing is left unfinished after the fires.
//
// Two measurements of pgwheel and the other stores alone stand beside the comparison: Churn
// (churn.go, cmd/sqlchurn), PostgreSQL's claims and settles while dead rows pile up, and Scale
// (scale.go, cmd/sqlscale, make -C bench scale), a backlog of 10M tasks on PostgreSQL, SQLite and
// a Redis Cluster behind the same durable.Queue: bytes per task, adds/s, claim cost, Stats' time,
// lateness and timerd's dashboard overview. Scale's Redis store makes this module depend on
// rediswheel; redisbench (the bench module) compares rediswheel with asynq instead, at go 1.24.
package sqlbench
