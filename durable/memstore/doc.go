// Package memstore is an in-memory durable.Store: the contract of
// durable/store.go in plain Go maps, a few hundred lines, no server.
//
// It is for two readers:
//
//   - Tests of code that uses durable. A Queue on a memstore runs every
//     feature of durable (Run, Mux, HTTP tasks, flow control, RetryAfter,
//     the Observer, periodic schedules) without Redis or a database, and
//     with Options.Clock a test can set the store's clock.
//   - Store authors. Each operation is written as the contract states it,
//     one task at a time, with no encoding and no query planner in the way:
//     read settle.go here beside a store's settle to see what it must do.
//     It passes the whole storetest suite, as every store must.
//
// It is not durable: nothing survives the process, and two processes never
// share a memstore. It keeps the contract's rules but not its cost bound:
// Claim, List, Stats and the trims scan a partition's tasks, so a call costs
// time in the number of tasks stored (fine for a test's thousands, not for a
// production queue's millions).
//
//	st := memstore.New(memstore.Options{Partitions: 4})
//	q, err := durable.New(st, durable.Options{})
//
// # Model
//
// A partition is a map from key to task under one mutex: every operation on
// a partition is atomic by holding it. A task is in one place, with one
// time, as rediswheel's sorted sets and the SQL stores' place and at
// columns have it:
//
//	place  at                   states
//	due    its due time         scheduled, retrying (an attempt counted, or a last error)
//	lease  its lease's end      in flight
//	dead   when it died         dead
//	kept   its retention's end  done, cancelled
//
// Times are Unix ms by the store's clock (Options.Clock), read once per
// operation: "now" rounded down, and, for a deadline a delay > 0 from now (a
// lease, a retry, a relative due time, a retention), now rounded up plus the
// delay, so that no deadline is before the call's time plus its delay.
package memstore
