package durable

import (
	"context"
	"time"
)

// Store is what a durable store provides: the atomic operations on its
// tasks, nothing more. Everything above them, the same on every store (the
// worker loop, leases and heartbeats, batched settles, wake-ups, Mux, HTTP
// tasks, policies, the Observer, periodic schedules, argument checks), is
// the Queue's. A Queue calls a Store from many goroutines at once: a Store
// must be safe for concurrent use.
//
// The contract each store signs, for every operation:
//
//   - Atomic: an operation on a partition (or on one key) happens all at
//     once or not at all, as seen by every other operation of any process.
//     A batch (Add's requests, Settle's outcomes, Extend's leases) may be
//     split into several atomic parts, each part all or nothing.
//   - One clock: every time an operation reads or writes (due times, lease
//     ends, "now") is Unix milliseconds by the store's own clock (Redis's
//     TIME, the database's clock), read inside the operation, never the
//     caller's. "Never early" is by that clock: Claim leases only tasks whose
//     due time is at or before the now it read.
//   - Idempotent where it says so: Add of an existing key changes nothing;
//     Settle or Extend with a stale token changes nothing.
//   - Bounded: each call does work bounded by its arguments (Claim's limit,
//     the batch sizes), never by the number of tasks stored.
//   - Errors: an error means the operation may or may not have happened
//     (a lost reply); the Queue relies only on what the contract allows
//     then (a lost Claim reply is absorbed by Limits.MaxUnconfirmed). An
//     error that retrying will not heal (credentials refused, the store's
//     protocol not understood) wraps ErrUnrecoverable, and ends Run. An
//     error that retrying may heal wraps ErrUnavailable, which callers of
//     the Queue test for (timerd answers 503 for it, 500 for any other):
//     the store unreachable or the connection cut (refused, reset, closed,
//     a network timeout), the store restarting or failing over (Redis's
//     LOADING, TRYAGAIN, CLUSTERDOWN, MASTERDOWN, READONLY; PostgreSQL's
//     connection exceptions, class 08, and admin, crash or startup
//     shutdown, 57P01-57P03), or busy (Redis's BUSY, PostgreSQL's
//     serialization failures and deadlocks, 40001 and 40P01, too many
//     connections, 53300; SQLite's SQLITE_BUSY and SQLITE_LOCKED). Any
//     other error (a bug, a reply not understood) wraps neither.
//
// Partitions: a store splits its tasks among Partitions() partitions (a Redis
// shard; 1 for a SQL table). Every key belongs to exactly one, fixed by the
// store; Claim, Extend and Settle work on one partition at a time. The
// worker claims in turn each partition that may have a task due (by its
// last Claimed.Next and the Queue's own calls; see Partitioner), all of
// them once every PollInterval, and batches settles by partition.
//
// The reference for every store is the state table in durable's package
// doc (doc.go): which operation moves a task from which state to which, on
// the store's clock. The Queue decides every outcome a Settle records
// (decide.go); a store decides only what must be atomic with its own
// operations (fencing, cancel while in flight, the due-time check, the
// reaping of expired leases in Claim). The package storetest holds the
// behavioural suite every store must pass.
type Store interface {
	// Partitions is the number of partitions, at least 1; it never changes.
	Partitions() int

	// Add stores each request as its mode says, atomically per key: Add
	// (Replace false) stores a key that exists in no state (scheduled,
	// retrying, in flight, dead or retained) and otherwise changes nothing
	// (AddExists); Replace stores it whatever its state, starting over with
	// no attempts, history or postponements, except a task in flight, left
	// alone (AddInFlight). A stored task is due at At, or, with Relative, at
	// the store's clock when the request is written plus At ms. It records
	// the task's added time, original due time, payload size and Policy for
	// Get and Claim. Each key appears at most once in a call: the Queue
	// folds repeats of a key into one request before it calls (add.go's
	// fold), so a store need not order them.
	//
	// Add sets each request's Status, or its Err if the part of the batch
	// that carried it failed (requests that failed together share one error
	// value). It returns the earliest due time among the tasks it stored,
	// -1 if none, for the Queue's wake-ups.
	Add(ctx context.Context, reqs []*AddRequest) (earliest int64)

	// Claim reaps up to lim.ReapBatch expired leases of partition (the task
	// goes back to due, now, with "lease expired" as its last error; its
	// attempt is counted unless none of its heartbeats or settles ever
	// reached the store and it has had fewer than lim.MaxUnconfirmed such
	// claims in a row; a task out of attempts, its Policy's MaxAttempts else
	// lim.MaxAttempts, goes to the dead set: the one retry-or-dead decision
	// a store makes, as no worker is left to make it), then,
	// unless the partition is paused, leases up to limit tasks due by now,
	// earliest first, until now+lease. Each leased task gets a fresh fencing
	// token, different from every token it had before, its attempt counted
	// (Attempt is this delivery's number) and a history entry opened for
	// lim.WorkerID; Claim reports its Policy and Postponements, which the
	// Queue decides the delivery's outcome from. Claimed.Next is the earliest due time left in the
	// partition (none while paused) or its earliest lease end, whichever
	// comes first, -1 if neither: the worker sleeps until then. A claim that
	// leased its whole limit may answer Now instead (more may be due, and
	// the worker claims again at once), sparing the store that search.
	Claim(ctx context.Context, partition, limit int, lease time.Duration, lim Limits) (Claimed, error)

	// Extend moves the lease of each task whose Token is current to now+lease
	// and confirms its delivery (it counts as started, see Claim); it returns
	// one ExtendCode per lease, in order. A stale token changes nothing.
	Extend(ctx context.Context, partition int, lease time.Duration, leases []Lease) ([]ExtendCode, error)

	// Settle records each outcome whose Token is current exactly as its
	// Kind says, and returns one SettleCode per outcome, in order; a stale
	// token changes nothing (SettleRejected). The Queue has decided each
	// Kind (durable's decide.go): a store applies it whatever the task's
	// attempts or postponements, and decides nothing but this one override:
	// a task Cancel marked while in flight is finished as cancelled
	// (SettleCancelled) whatever the outcome. The moves, on the store's
	// clock (the state table in doc.go):
	//
	//	done     finished: retained for lim.Retention, else forgotten   SettleDone
	//	retry    due at now+Delay, attempt kept, postponements to 0     SettleRetry
	//	dead     to the dead set                                        SettleDead
	//	release  due at now, attempt given back                         SettleReleased
	//	later    due at now+Delay, attempt given back, postponements+1  SettlePostponed
	//
	// Retry, dead and later store Err as the task's last error; a done
	// task's last error is cleared (it succeeded; its history keeps every
	// attempt's error). Each settled delivery, with its Kind (or
	// "cancelled"), Err (cut) and Result, is appended to the task's history
	// (a done or cancelled one only with retention). Finished tasks are
	// retained for lim.Retention (at most lim.MaxRetained per partition,
	// oldest forgotten first) or forgotten at once; the dead set keeps at
	// most lim.MaxDead per partition, oldest dropped first. Settled.Next is
	// the earliest due time the call gave a task it made due again (retried,
	// postponed or released), -1 if none, for the Queue's wake-ups; a store
	// may instead return the partition's earliest due time after the call
	// (never later; the Redis store does).
	Settle(ctx context.Context, partition int, lim Limits, outcomes []Outcome) (Settled, error)

	// Cancel finishes the task under key, finally: a scheduled, retrying or
	// dead one at once (retained as cancelled for retention, else
	// forgotten), a retained one forgotten at once; one in flight is marked,
	// so that its Settle finishes it as cancelled and its Extend answers
	// ExtendCancelled. Found is false if the key is in no state.
	Cancel(ctx context.Context, key string, retention time.Duration, maxRetained int) (CancelResult, error)

	// Reschedule moves a scheduled or retrying task to be due at at;
	// attempts, last error, payload and original due time stay (only Add and
	// Replace set the original due time).
	Reschedule(ctx context.Context, key string, at int64) (RescheduleResult, error)

	// Requeue moves a dead task back to due now, attempts and postponements
	// reset, last error kept; requeued is false if key is not dead. due is
	// its new due time.
	Requeue(ctx context.Context, key string) (requeued bool, due int64, err error)

	// Get reads one task in one atomic read, its policy and postponements
	// included (Complete decides from them); nil, nil if key is in no state.
	Get(ctx context.Context, key string) (*TaskInfo, error)

	// List returns, in one consistent order across partitions (position:
	// time in state, then key bytewise), up to limit tasks in state after
	// the position after (nil: from the start), and the position the next
	// page starts after, nil if there is none. A page may hold fewer than
	// limit tasks while next is not nil, when a partition bounds the work
	// of one call. Each returned task is in state as it was read.
	List(ctx context.Context, state State, after *ListPos, limit int) (tasks []TaskInfo, next *ListPos, err error)

	// Dead returns up to limit dead tasks of each partition, oldest first in
	// each; the Queue merges them.
	Dead(ctx context.Context, limit int) ([]DeadTask, error)

	// Stats returns one atomic snapshot per partition, in partition order
	// (ShardStats.Shard set, the counts as of the store's now).
	Stats(ctx context.Context) ([]ShardStats, error)

	// Pause sets (paused) or clears the flag of every partition that makes
	// Claim lease nothing; an error may leave some partitions changed.
	Pause(ctx context.Context, paused bool) error

	// Periodic runs one step on the registry of periodic schedules, atomic
	// per name (see PeriodicOp).
	Periodic(ctx context.Context, op PeriodicOp, name string, from, to int64) (PeriodicState, error)
}

// Notifier is an optional interface of a Store whose processes can tell
// each other of new tasks (PostgreSQL's LISTEN/NOTIFY): a Run on such a
// store starts Notify when it starts and stops it when its polling ends, so
// that an idle worker claims a task any process adds for sooner at once,
// not up to Options.PollInterval late. Without it, only this Queue's own
// calls wake its Runs early. The Redis store is not a Notifier; the SQLite
// store is one within its process (a commit hook on its writer connection,
// for tasks the application commits with AddTx).
type Notifier interface {
	// Notify calls wake(due) for each task another process stores, moves
	// earlier or makes claimable again (Add, Replace, Reschedule, Requeue,
	// Resume) when it may be due before every task the store held (a store
	// may also announce others), due being its due time in the store's
	// Unix ms; only once the write is committed, never for one rolled back.
	// It returns only once ctx ends. Each time it starts or resumes
	// listening, after a lost connection included, it calls wake(0), so
	// that a claim finds what was stored while nobody listened; it
	// reconnects by itself, with a pause between failed attempts, passing
	// each failure to report. wake and report are safe for concurrent use
	// and return at once. Announcements are hints: a worker still polls at
	// its PollInterval.
	Notify(ctx context.Context, wake func(due int64), report func(error))
}

// Partitioner is an optional interface of a Store of several partitions
// that knows, without a call, the partition of a key (rediswheel's shard
// hash). With it, an Add through the Queue tells its Runs which partitions
// gained a task, and they claim only those when it falls due; without it,
// every partition, as for a task another process adds.
type Partitioner interface {
	// Partition is key's partition, in [0, Partitions()); it never changes.
	Partition(key string) int
}

// An AddRequest is one task for Store.Add.
type AddRequest struct {
	Key     string
	Payload []byte
	// Replace: store whatever exists, unless in flight (Replace); else only
	// a new key (Add).
	Replace bool
	// Relative: At is a delay in ms from the store's clock at the write;
	// else a Unix ms.
	Relative bool
	At       int64
	Policy   Policy

	// Set by Store.Add.
	Status AddStatus
	Err    error

	// The Queue's own, never a store's: for a coalesced Add (see adder), each closed at most once.
	done chan struct{} // status and err are set
	lead chan struct{} // this request's caller must send the next batch
	quit bool          // its caller has returned; guarded by adder.mu
}

// AddStatus is what Store.Add did with one request.
type AddStatus int64

// The add statuses; the Redis store's add.lua returns the same numbers.
const (
	AddInFlight AddStatus = -1 // Replace: the key is in flight, nothing changed
	AddExists   AddStatus = 0  // Add: the key exists in some state, nothing changed
	AddStored   AddStatus = 1
)

// Policy is a task's own policy, stored with it; a zero field means the
// Queue's. A store keeps durations to the millisecond (rounded up).
type Policy struct {
	Type                      string
	Timeout                   time.Duration
	MaxAttempts               int
	BackoffBase, BackoffLimit time.Duration
}

// Limits are the Queue's settings that a store's operations apply.
type Limits struct {
	// MaxAttempts is the deliveries before death, unless the task's Policy
	// says, for Claim's reaping only: a lease that ran out has no worker to
	// decide for it, and the reap must be atomic with the claim that follows
	// it. Settle decides nothing with it (the Queue has).
	MaxAttempts int
	MaxDead     int           // dead tasks kept per partition
	MaxRetained int           // retained tasks kept per partition
	HistoryLen  int           // deliveries remembered per task
	Retention   time.Duration // how long finished tasks are kept; 0: forgotten
	WorkerID    string        // names this worker's deliveries in histories
	// ReapBatch caps the expired leases one Claim reaps.
	ReapBatch int
	// MaxUnconfirmed bounds the unconfirmed claims in a row that do not count
	// an attempt (see Claim).
	MaxUnconfirmed int
}

// Claimed is the reply of one Store.Claim.
type Claimed struct {
	Now         int64 // the store's clock, Unix ms
	Next        int64 // see Store.Claim; -1 if none
	DeadTrimmed int   // dead tasks dropped over MaxDead by the reaping
	Paused      bool  // the partition is paused: nothing was leased
	Tasks       []ClaimedTask
}

// ClaimedTask is one task leased by Store.Claim.
type ClaimedTask struct {
	Key     string
	Payload []byte
	Attempt int
	Due     int64 // Unix ms; at or before Claimed.Now
	// OriginalDue is the due time Add or Replace gave the task (Due if the
	// store does not know it); Reschedule leaves it.
	OriginalDue int64
	// Token is this delivery's fencing token: not empty, without a '.' (the
	// Queue puts it after the partition in Task.Token).
	Token  string
	Policy Policy
	// Postponements counts the task's OutcomeLater in a row before this
	// delivery (since it was added, replaced, requeued or last settled
	// OutcomeRetry): the Queue bounds them with MaxPostponements.
	Postponements int
}

// Lease names one delivery for Store.Extend.
type Lease struct {
	Key, Token string
}

// ExtendCode is what Store.Extend did with one lease.
type ExtendCode int64

// The extend codes; the Redis store's extend.lua returns the same numbers.
const (
	ExtendLost      ExtendCode = 0 // the token is not current: the task is no longer ours
	ExtendOK        ExtendCode = 1 // extended
	ExtendCancelled ExtendCode = 2 // extended, but Cancel was called for the task
)

// An Outcome is a finished delivery for Store.Settle.
type Outcome struct {
	Key, Token string
	Kind       OutcomeKind
	// Delay is the wait before the next delivery, ms (OutcomeRetry,
	// OutcomeLater), the Queue's decision (backoff, RetryAfter, never 0 for
	// a RetryAfter of 0: see postponement); a store applies it as given.
	Delay int64
	Err   string // the handler's error, stored as the task's last error
	// Result is what the delivery produced (SetResult), at most
	// MaxResultBody bytes of body: the store keeps it in the delivery's
	// history entry, whatever the Kind (Delivery.Result).
	Result Result
	// Waited is how long, in ms, the delivery waited between its claim and
	// its handler's start (for its Flow key), by the worker's clock: the
	// store records the history entry's Start that much after the claim,
	// never after its End, so that End - Start is the handler's time
	// (issue 31: a 2 ms 404 parked behind a breaker read "took 1m17s").
	// 0: the claim's time.
	Waited int64
}

// OutcomeKind names what Store.Settle does with a finished delivery, as the
// Queue decided it (decide.go); the Redis store's settle.lua spells the same
// names and rejects any other.
type OutcomeKind string

const (
	OutcomeDone    OutcomeKind = "done"    // the handler returned nil: the task is finished
	OutcomeRetry   OutcomeKind = "retry"   // failed: due again after Delay, attempt counted
	OutcomeDead    OutcomeKind = "dead"    // out of attempts, or Permanent: to the dead set
	OutcomeRelease OutcomeKind = "release" // Run stopped: due again at once, attempt not counted
	OutcomeLater   OutcomeKind = "later"   // RetryAfter, a Flow hand-back: due again after Delay, attempt not counted
)

// SettleCode is what Store.Settle did with one outcome.
type SettleCode int64

// The settle codes; the Redis store's settle.lua returns the same numbers.
const (
	SettleRejected  SettleCode = 0 // the token was stale: another worker owns the task
	SettleDone      SettleCode = 1 // finished (forgotten, or retained)
	SettleRetry     SettleCode = 2 // due again after the delay, attempt counted
	SettleDead      SettleCode = 3 // buried
	SettleCancelled SettleCode = 4 // Cancel came first: finished as cancelled, never retried
	SettleReleased  SettleCode = 5 // due again at once, attempt not counted
	SettlePostponed SettleCode = 6 // later: due again after the delay, attempt not counted
)

// Settled is the reply of one Store.Settle.
type Settled struct {
	Codes           []SettleCode // one per outcome, in order
	Next            int64        // see Store.Settle; -1 if none
	DeadTrimmed     int          // dead tasks dropped over MaxDead
	RetainedTrimmed int          // retained tasks forgotten (retention over, or over MaxRetained)
}

// CancelResult is the reply of Store.Cancel.
type CancelResult struct {
	Found           bool
	Partition       int // the key's partition
	RetainedTrimmed int // retained tasks forgotten by the call
}

// RescheduleResult is what Store.Reschedule did.
type RescheduleResult int64

// The reschedule results; the Redis store's reschedule.lua returns the same
// numbers.
const (
	RescheduleMissing  RescheduleResult = 0 // not scheduled or retrying: nothing changed
	RescheduleMoved    RescheduleResult = 1
	RescheduleInFlight RescheduleResult = 2 // in flight: nothing changed
)

// ListPos is a task's position in a List: its time in its state (Unix ms),
// then its key.
type ListPos struct {
	At  int64
	Key string
}

// PeriodicOp is one step on the periodic registry, which maps a schedule's
// name to its pointer (the latest time added, Unix ms).
type PeriodicOp string

const (
	// PeriodicRegister creates the entry with the pointer at now unless it
	// exists, then reads it.
	PeriodicRegister PeriodicOp = "register"
	// PeriodicRead reads the entry.
	PeriodicRead PeriodicOp = "read"
	// PeriodicAdvance moves the pointer from from to to, only if it is at
	// from (a compare-and-set); to must be later than from, or the store
	// returns an error: the pointer never goes backwards.
	PeriodicAdvance PeriodicOp = "advance"
	// PeriodicRemove deletes the entry.
	PeriodicRemove PeriodicOp = "remove"
)

// PeriodicState is the reply of Store.Periodic.
type PeriodicState struct {
	// Status is 1 when the step changed the entry (register created it,
	// advance moved it), 0 when it did not (register found it, advance found
	// the pointer moved by another replica; read and remove always), -1 when
	// there is no such entry (Pointer 0).
	Status  int64
	Pointer int64 // the entry's pointer after the step (remove: the one it deleted), Unix ms
	Now     int64 // the store's clock, Unix ms
}
