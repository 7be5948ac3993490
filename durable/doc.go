// Package durable is the API of durable delayed tasks, the same on every
// store: a Queue adds tasks under keys (Add, AddAfter, AddBatch, Replace),
// steers them (Cancel, Reschedule, Requeue, Pause, Resume), reads them (Get,
// List, Stats, Dead), keeps periodic schedules (Periodic) and delivers them
// to a Handler or a Mux in any number of processes (Run), with HTTP tasks,
// per-task policies, RetryAfter and Permanent, flow control per destination
// (Flow: limits and a circuit breaker per callback origin or task type), an
// Observer, retention and delivery history.
//
// Where the tasks live is a Store: a small interface of atomic operations
// (store.go), one module per store: rediswheel (Redis, a single server or
// Redis Cluster), pgwheel (PostgreSQL, with AddTx in the caller's
// transaction) and sqlitewheel (one SQLite file, one process; timerd's
// default). A store may also wake idle workers of every process when
// another adds a task (Notifier; pgwheel's LISTEN/NOTIFY). Everything else is written once, here, and
// imports no driver: the worker loop (claims, leases and heartbeats, batched
// settles, lost-claim-reply handling, wake-ups), Mux, HTTP tasks and their
// validation, backoff and policies, the Observer, the periodic logic, and
// every check of arguments, so bad input gets the same errors on every
// store. The package storetest is the behavioural suite every store runs.
//
//	st, err := sqlitewheel.Open(ctx, "tasks.db", sqlitewheel.Options{}) // or pgwheel.New(pool, "orders"),
//	q, err := durable.New(st, durable.Options{})                        // or rediswheel.NewStore(client, "orders", 0)
//	q.AddAfter(ctx, "order:1001", payload, 30*time.Minute) // at checkout
//	q.Cancel(ctx, "order:1001")                            // on payment
//	q.Run(ctx, handler)                                    // in every worker
//
// # Delivery contract
//
// Every store keeps this contract; "the store's clock" is the one clock of
// the store (Redis's TIME, the database's clock), never a worker's.
//
//   - At least once. A task is finished only after its handler returns nil
//     and the settle reaches the store. A worker that crashes, stalls past
//     its lease or loses its settle has its tasks delivered again, so
//     handlers must be idempotent by Task.Key (HTTPHandler sends it as
//     Idempotency-Key).
//   - Never early, by the store's clock. Due times are rounded up to the
//     millisecond and compared with the store's clock inside the claim; a
//     past due time fires at once. AddAfter counts its delay from the store's
//     clock when the task is written, so the caller's clock does not matter.
//   - Idempotent add. An existing key, in any state (scheduled, retrying, in
//     flight, dead, or retained: Options.Retention), makes Add return false
//     and change nothing; Replace rewrites a task that is not in flight.
//   - Final cancel. A scheduled or dead task is finished at once; a later
//     Add of the key is a new task (with Options.Retention it is retained as
//     cancelled until its retention ends). A task in flight is never retried
//     whatever its handler returns, and its handler's context is cancelled
//     (ErrCanceled) at the next heartbeat.
//   - Fencing tokens. Each delivery has a token, new at every claim; a
//     settle or heartbeat with any other token is rejected, so a stale
//     worker cannot finish or keep a task another worker owns (its handler's
//     context is cancelled with ErrLeaseLost).
//   - Bounded retries. Retries back off (Options.Backoff, or the task's
//     TaskBackoff); a task dies after Options.MaxAttempts deliveries (or its
//     TaskMaxAttempts) or a Permanent error; RetryAfter postpones without
//     counting an attempt at most MaxPostponements times in a row; each
//     partition keeps at most Options.MaxDead dead tasks.
//   - Lost claim replies. A claim whose reply never reached the worker
//     leases tasks no handler runs. A lease that runs out before any
//     heartbeat or settle of its delivery reached the store may have been
//     one, so its attempt is not counted, up to 3 in a row: a task that
//     crashes its worker every time before the first heartbeat (Lease/3)
//     still dies, at most 3 deliveries later.
//
// Not guaranteed: order between tasks due at the same time; exactly-once
// (use the key to de-duplicate); prompt delivery of a task added by another
// process, unless the store is a Notifier (an idle worker sleeps until the
// next due time it knows of, at most Options.PollInterval; only a call
// through its own Queue that makes a task due sooner, a retry it schedules
// itself, or, on a Notifier, another process's add of an earlier task,
// wakes it early).
//
// # State machine
//
// This table is the reference for every store: which call moves a task from
// which state to which, and when. Each row is one atomic store operation,
// and every time it reads or writes (now, due times, lease ends) is on the
// store's clock. The worker's clock decides only when a handler times out
// and when it heartbeats; the Queue decides every outcome Settle records
// (decide.go, the second table), and a store decides only what the last
// column marks "store": what must be atomic with its own operations, where
// no worker is left to ask.
//
//	call (Store)      from                        to                         when, what changes
//	Add               none                        scheduled                  due at At, or now+At (Relative)
//	Add (Replace)     any but in flight           scheduled                  attempts, postponements, history, last error start over
//	Reschedule        scheduled, retrying         the same, due at at        original due time kept
//	Claim             scheduled, retrying         in flight                  due <= now, not paused: attempt+1, new token, lease to now+lease
//	Claim (reap)      in flight                   retrying, due now          lease ended, attempts left (see Claim): "lease expired" (store)
//	Claim (reap)      in flight                   dead                       lease ended, out of attempts, Limits.MaxAttempts (store)
//	Claim (reap)      in flight, cancel marked    cancelled (or gone)        lease ended (store)
//	Extend            in flight                   in flight                  token current: lease to now+lease, delivery confirmed
//	Settle done       in flight                   done (or gone)             token current: last error cleared
//	Settle retry      in flight                   retrying                   due at now+Delay, attempt kept, postponements to 0
//	Settle dead       in flight                   dead                       as told, whatever the attempts
//	Settle release    in flight                   scheduled or retrying      due now, attempt given back
//	Settle later      in flight                   retrying                   due at now+Delay, attempt given back, postponements+1
//	Settle (any)      in flight, cancel marked    cancelled (or gone)        the one override of a Kind (store)
//	Cancel            scheduled, retrying, dead   cancelled (or gone)
//	Cancel            in flight                   in flight, cancel marked   its Settle or reap finishes it; Extend answers ExtendCancelled
//	Cancel            done, cancelled             gone
//	Requeue           dead                        retrying, due now          attempts and postponements to 0, last error kept
//	Claim, Settle     dead                        gone                       over Limits.MaxDead, oldest first
//	Settle, Cancel    done, cancelled             gone                       retention over, or over Limits.MaxRetained
//
// "(or gone)": without retention a finished task is forgotten at once. A
// stale token changes nothing (SettleRejected, ExtendLost).
//
// What the Queue sends to Settle for a delivery whose handler returned, or
// whose Complete was called, with result (decide.go; Complete reads the
// attempt, policy and postponements with Get, Run has them from Claim):
//
//	result                              Settle's Kind, Delay
//	nil                                 done
//	Permanent                           dead
//	RetryAfter(d), MaxPostponements     later, d (0: the backoff of this attempt)
//	  not reached
//	RetryAfter(d), MaxPostponements     retry, the same delay; dead at the last attempt
//	  reached
//	any other error, a timeout, panic   retry, the backoff; dead at the last attempt
//	a failure once Run is stopping      release
//	Flow hand-back (not run)            later, as a RetryAfter
//
// The last attempt is the task's TaskMaxAttempts, else Options.MaxAttempts.
//
// # Bad input
//
// The Queue checks every argument before any store call, so bad input gets
// the same error on every store, and a batch with one bad item stores none
// of them. The narrowest store sets each bound (PostgreSQL's text for keys
// and names, Redis's doubles for times and counts). One table for every
// store; storetest's BadInputStoresNothing holds each store to its "else"
// column, through every call that takes the argument, and
// EdgeInputReadsBackAlike to its "accepted" one:
//
//	argument (calls)                   accepted                                  else
//	task key (every call with one)     1..MaxKeyLen bytes of UTF-8 without NUL   ErrKey
//	  AddHTTP's, also                  a header value: no control character      ErrKey
//	                                   but tab, no space or tab at either end
//	payload (Add…, Replace, Periodic)  at most MaxPayloadLen bytes, any bytes    ErrPayload
//	TaskOption                         as each option says; not nil              ErrTaskOption
//	HTTPTask (AddHTTP…, ReplaceHTTP)   as its fields say                         ErrInvalidURL, ErrInvalidMethod,
//	                                                                             ErrInvalidHeader, ErrInvalidTimeout
//	periodic name                      1..MaxPeriodicNameLen bytes, as a key     ErrPeriodicName
//	List's state, limit, cursor        a State, at least 1, List's own cursor    ErrState, ErrLimit, ErrCursor
//	Complete's token                   a Task.Token of a partition the store has ErrToken
//	  of no current delivery           (any other store token included)          ErrStaleToken
//	Options (New)                      as each field says; WorkerID UTF-8        ErrOptions
//	                                   without NUL
//
// Taken and adjusted, never refused, alike on every store: a due time up
// to 1970 is stored as 1 ms (due at once), one past 2^53 ms (year 287,396)
// as 2^53 ms; List's limit over MaxListLimit is MaxListLimit; Dead's limit
// below 1 returns nothing; a handler's error text becomes UTF-8 without NUL,
// cut to 1 KiB on a rune's boundary (a history entry keeps its first 256
// bytes, and there a rune cut reads as U+FFFD on PostgreSQL, as its bytes
// elsewhere). A nil Schedule or Handler panics.
//
// # Layout
//
// One file per idea: queue.go (the Queue, wake-ups), store.go (the Store
// contract), options.go, check.go (keys, payloads, names), add.go (Add and
// its group commit), decide.go (retry, dead or postpone), worker.go (Run,
// the poller), notify.go (a Notifier's wake-ups), claim.go, settle.go,
// extend.go (heartbeats), timeout.go,
// shutdown.go, observer.go, report.go, periodic.go, mux.go, httptask.go,
// httpvalid.go, httporigin.go, policy.go, backoff.go, retryafter.go, flow.go
// (Flow, its options), limit.go (Limit, the rate bucket), breaker.go,
// gate.go (one Run's flow control decisions), flowrun.go (the worker's side), state.go (Get's and
// List's types), get.go, list.go (cursors), cancel.go, reschedule.go,
// dead.go, pause.go, stats.go, errors.go.
package durable
