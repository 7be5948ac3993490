package durable

import (
	"errors"
	"time"
)

// State is where a task is in its life, as Get and List report it.
//
//	scheduled  in due, never delivered yet (or Replaced since)
//	retrying   in due after at least one delivery or a recorded error
//	in flight  in lease: a worker holds it, its handler runs (or the worker died)
//	dead       in dead: out of attempts or failed permanently
//	done       in kept: its handler succeeded; retained for Options.Retention
//	cancelled  in kept: Cancel removed it; retained for Options.Retention
//
// Scheduled and retrying share the due set: a task in due is retrying when
// it has been counted an attempt or carries a last error (a lost lease, a
// RetryAfter, or a Requeue, which keeps the error). Release on shutdown gives
// the attempt back, so a task released on its first delivery reads as
// scheduled again.
type State string

// The states of a task. The spellings are part of the List cursor and of the
// stores' protocol (rediswheel's lua/list.lua matches them): do not change
// them.
const (
	StateScheduled State = "scheduled"
	StateRetrying  State = "retrying"
	StateInFlight  State = "in flight"
	StateDead      State = "dead"
	StateDone      State = "done"
	StateCancelled State = "cancelled"
)

// valid reports whether s is one of the six states.
func (s State) valid() bool {
	switch s {
	case StateScheduled, StateRetrying, StateInFlight, StateDead, StateDone, StateCancelled:
		return true
	}
	return false
}

// TaskInfo is what Get and List tell about one task, read atomically from
// its partition. Times are by the store's clock, to the millisecond; a zero time
// means unknown or not applicable. Tasks stored before task records existed
// (rediswheel's, with no m| field) have zero Added, OriginalDue, Type, Timeout and MaxAttempts.
type TaskInfo struct {
	Key   string
	Type  string // set with TaskType; "" if none
	State State
	// Due is the next delivery's time for a scheduled or retrying task and
	// the lease's end for a task in flight; zero otherwise.
	Due time.Time
	// OriginalDue is the due time given by Add or Replace; Reschedule
	// leaves it, so it tells how far the task was moved.
	OriginalDue time.Time
	// Attempts counts deliveries so far, the one in flight included.
	Attempts int
	// LastError is the last failure's text ("lease expired" when a worker
	// vanished), kept until the task succeeds (done: cleared; History keeps
	// each attempt's error) or is replaced. A cancelled task keeps it.
	LastError string
	// PayloadSize is the payload's length in bytes, as added.
	PayloadSize int
	// Added is when Add or Replace last stored the task.
	Added time.Time
	// Started is when its last delivery began.
	Started time.Time
	// Finished is when it died (dead) or finished (done, cancelled).
	Finished time.Time
	// Timeout, MaxAttempts, BackoffBase and BackoffLimit are the task's own
	// policy (TaskTimeout, TaskMaxAttempts, TaskBackoff); zero means the
	// Queue's.
	Timeout                   time.Duration
	MaxAttempts               int
	BackoffBase, BackoffLimit time.Duration
	// Postponements counts its RetryAfter postponements in a row (see
	// ClaimedTask.Postponements); the one in flight is not counted yet.
	Postponements int
	// History holds its last deliveries, oldest first, at most
	// Options.HistoryLen of them.
	History []Delivery
}

// Delivery is one past delivery of a task.
type Delivery struct {
	Attempt int
	Worker  string // Options.WorkerID of the Run that ran it
	// Start is when its handler started (its claim, plus any wait for its
	// Flow key: Outcome.Waited), End when it was settled, both by the
	// store's clock: End - Start is the handler's time.
	Start, End time.Time
	// Outcome is how it ended: done, retry, dead, release or later (what
	// the handler's result made of it), cancelled, or lease expired.
	Outcome string
	Error   string // the handler's error, cut at 256 bytes
	// Result is what the delivery produced (see Result and SetResult): for
	// an HTTP task, the callback's status code and the first MaxResultBody
	// bytes of its response body. Zero when it produced none.
	Result Result
}

// Errors of Get, List and Reschedule, for errors.Is.
var (
	// ErrNotFound reports that Get found no task under the key in any state.
	ErrNotFound = errors.New("durable: task not found")
	// ErrState reports a State that is not one of the six.
	ErrState = errors.New("durable: unknown task state")
	// ErrCursor reports a List cursor that List did not make for that state.
	ErrCursor = errors.New("durable: bad list cursor")
	// ErrLimit reports a List limit below 1.
	ErrLimit = errors.New("durable: bad list limit")
)
