package durable

import (
	"context"
	"time"
)

// An Observer receives a Queue's events, for metrics and tracing: tasks
// added, claim and settle round trips, deliveries started and finished, dead
// and retained tasks trimmed, failed store calls. Set it as Options.Observer;
// the module durable/durablemetrics turns the events into Prometheus
// metrics.
//
// Its methods are called synchronously, on the goroutines of Add and of Run,
// from any number of them at once: they must be safe for concurrent use,
// return quickly and never block, or they slow down the calls they observe.
// They must not call the Queue: an Add from TasksAdded, for one, would wait
// for the very batch being reported. An event's Task shares its Payload with
// the handler: do not modify or keep it.
//
// The interface may gain methods: embed NoopObserver to implement only some
// of them and keep compiling.
type Observer interface {
	// TasksAdded follows each batch of Add, AddAfter, AddBatch or Replace
	// calls sent to the store together (one Store.Add). Failed calls are
	// reported to StoreError, not here.
	TasksAdded(AddEvent)
	// Claimed follows each claim round trip of Run, successful or not; one
	// whose Run was stopping is not reported.
	Claimed(ClaimEvent)
	// DeliveryStarted reports each delivery just before its handler starts:
	// after its claim, and after any wait for its flow key (Flow). A task
	// claimed as Run stops, or handed back by flow control, does not start
	// and has neither event.
	DeliveryStarted(StartEvent)
	// HandlerFinished reports each handler's return, with what Run asks the
	// store's settle to do with the task; a handler that outlives its timeout
	// is reported when the timeout settles its task.
	HandlerFinished(FinishEvent)
	// Settled follows each settle round trip of Run, successful or not.
	Settled(SettleEvent)
	// DeadTrimmed reports dead tasks dropped because their partition held
	// more than Options.MaxDead.
	DeadTrimmed(TrimEvent)
	// RetainedTrimmed reports retained tasks (Options.Retention) forgotten by
	// a settle or a Cancel: their retention was over, or their partition held
	// more than Options.MaxRetained, which ends uniqueness windows early.
	RetainedTrimmed(TrimEvent)
	// StoreError reports each failed store call of an Add (whose caller gets
	// the error too) and each one Run retries: its claims, settles and lease
	// extensions (whose errors also go to Options.OnError or the log). A
	// claim error that ends Run (ErrUnrecoverable) is Run's to return.
	StoreError(StoreErrorEvent)
	// BreakerChanged reports each Flow breaker that opens (Failures
	// failures in a row, or a failed probe) or closes (a probe succeeded),
	// just after the handler whose result moved it returned. The move from
	// open to half-open (a probe let through) is not reported.
	BreakerChanged(BreakerEvent)
	// Completed reports each Complete whose settle the store accepted: what
	// the caller's result decided for the detached delivery and what the
	// store did with it. A task that dies here (a failure at its last
	// attempt, or a Permanent one) is reported here only: no handler
	// returned, so HandlerFinished is not called (the delivery's own
	// HandlerFinished said "detach"). A Complete refused (ErrToken,
	// ErrStaleToken) or failed in the store is not reported.
	Completed(CompleteEvent)
}

// NoopObserver implements Observer by ignoring every event. Embed it in an
// Observer that handles only some.
type NoopObserver struct{}

func (NoopObserver) TasksAdded(AddEvent)         {}
func (NoopObserver) Claimed(ClaimEvent)          {}
func (NoopObserver) DeliveryStarted(StartEvent)  {}
func (NoopObserver) HandlerFinished(FinishEvent) {}
func (NoopObserver) Settled(SettleEvent)         {}
func (NoopObserver) DeadTrimmed(TrimEvent)       {}
func (NoopObserver) RetainedTrimmed(TrimEvent)   {}
func (NoopObserver) StoreError(StoreErrorEvent)  {}
func (NoopObserver) BreakerChanged(BreakerEvent) {}
func (NoopObserver) Completed(CompleteEvent)     {}

// AddEvent is one batch of added tasks of one kind.
type AddEvent struct {
	// Replace is true for Replace, false for Add, AddAfter and AddBatch.
	Replace bool
	// Stored counts the tasks written to the store: new ones (Add) or
	// overwritten ones (Replace).
	Stored int
	// Skipped counts the tasks left unchanged: an Add of a key that exists,
	// a Replace of a task in flight.
	Skipped int
}

// ClaimEvent is one claim round trip of one partition of the store. Shard,
// here and in the other events, is the partition (ShardStats.Shard): 0 on a
// store of one, as a SQL store is.
type ClaimEvent struct {
	Shard    int
	Tasks    int           // tasks leased
	Duration time.Duration // from the call to its reply, local clock
	Err      error         // nil if it succeeded
}

// StartEvent is the start of one delivery.
type StartEvent struct {
	Task Task
	// Lateness is how long after Task.Due the handler starts: the claim's
	// time minus Due by the store's clock, to the millisecond, plus the
	// local time from the claim's reply to the start (a wait for the flow
	// key). It is free of any clock skew between worker and store.
	Lateness time.Duration
}

// FinishEvent is the end of one delivery's handler.
type FinishEvent struct {
	Task Task
	// Outcome is what the Queue decided for the delivery (decide.go) and
	// sends to the store's Settle, an OutcomeKind: "done", "retry", "dead"
	// (a Permanent error, or a failure at the last attempt), "release" or
	// "later"; or "detach" for a Detach (no settle follows; see Complete).
	// The store records it as told, unless Cancel was called while the
	// handler ran (finished as cancelled) or the lease was lost (rejected):
	// see SettleEvent.
	Outcome string
	// Error is the handler's error text as stored with the task ("" if none).
	Error string
	// Result is what the handler gave SetResult (for HTTPHandler, the
	// callback's status code and body); zero if none, or after a timeout.
	Result Result
	// Duration runs from the handler's start to its return, local clock:
	// a task that waited for its flow key (Flow) does not count the wait.
	Duration time.Duration
}

// BreakerEvent is a Flow breaker that opened or closed.
type BreakerEvent struct {
	Key   string // the flow key: a callback's origin with HTTPOrigin
	State string // "open" or "closed"
	// Failures counts the failures in a row that opened it (1 for a failed
	// probe); 0 when it closes.
	Failures int
	// Error is the error text of the delivery that opened it ("" if it
	// closed, or timed out: then "handler timeout").
	Error string
	// OpenUntil is when an open breaker lets a probe through; zero when it
	// closes.
	OpenUntil time.Time
}

// CompleteEvent is one Complete that the store accepted.
type CompleteEvent struct {
	Key string
	// Attempt is the delivery's attempt as the store held it, for a
	// failure; 0 for a success, which reads nothing from the store.
	Attempt int
	// Outcome is what the result decided, an OutcomeKind: "done", "retry",
	// "dead" or "later".
	Outcome string
	// Error is the result's text as stored with the task ("" if none).
	Error string
	// Code is what the store did: SettleDone, SettleRetry, SettleDead,
	// SettlePostponed, or SettleCancelled when Cancel came first.
	Code SettleCode
}

// SettleEvent is one settle round trip of one partition: the tasks it was sent
// and, if it succeeded, what became of them.
type SettleEvent struct {
	Shard    int
	Tasks    int
	Duration time.Duration // from the call to its reply, local clock
	Err      error         // nil if it succeeded; then the counts are zero

	Done      int // finished
	Retried   int // due again later, the attempt counted
	Dead      int // moved to the dead set
	Cancelled int // dropped: Cancel was called while the handler ran
	Released  int // due again at once, the attempt not counted
	Postponed int // due again after the handler's RetryAfter, the attempt not counted
	Rejected  int // dropped: the lease was lost, another delivery owns the task
}

// TrimEvent is a number of dead tasks dropped from one partition (DeadTrimmed),
// or of retained tasks forgotten (RetainedTrimmed).
type TrimEvent struct {
	Shard int
	Tasks int
}

// StoreErrorEvent is one failed store call.
type StoreErrorEvent struct {
	Op  StoreOp
	Err error // names the partition, if the call was for one
}

// StoreOp names the operation a failed store call was made for.
type StoreOp string

// The operations whose failures reach Observer.StoreError.
const (
	OpAdd    StoreOp = "add"    // Add, AddAfter, AddBatch, Replace
	OpClaim  StoreOp = "claim"  // Run's poll
	OpSettle StoreOp = "settle" // Run's report of finished deliveries
	OpExtend StoreOp = "extend" // Run's lease heartbeat
	// runner.report's op names are the same.
)

// observedClaim is claim, timed and reported to the Observer, with one
// DeliveryStarted per task. Without an Observer it is claim.
func (q *Queue) observedClaim(ctx context.Context, partition, limit int, lease time.Duration) (claimed, error) {
	o := q.opts.Observer
	if o == nil {
		return q.claim(ctx, partition, limit, lease)
	}
	began := time.Now()
	c, err := q.claim(ctx, partition, limit, lease)
	if err != nil {
		if ctx.Err() == nil { // not a store failure: Run is stopping
			o.Claimed(ClaimEvent{Shard: partition, Duration: time.Since(began), Err: err})
		}
		return c, err
	}
	o.Claimed(ClaimEvent{Shard: partition, Tasks: len(c.tasks), Duration: c.at.Sub(began)})
	q.observeTrimmed(partition, c.trimmed)
	for _, d := range c.tasks {
		// Both times are the store's: claim only leases tasks due by c.now.
		d.claimLate = time.Duration(max(c.now-d.task.Due.UnixMilli(), 0)) * time.Millisecond
	}
	return c, nil
}

// observeStarted reports that d's handler starts (at d.began).
func (q *Queue) observeStarted(d *delivery) {
	if o := q.opts.Observer; o != nil {
		o.DeliveryStarted(StartEvent{Task: d.task, Lateness: d.claimLate + d.waited()})
	}
}

// observeFinished reports the handler's return that o settles, and returns o.
func (q *Queue) observeFinished(o outcome) outcome {
	if obs := q.opts.Observer; obs != nil {
		obs.HandlerFinished(FinishEvent{Task: o.d.task, Outcome: string(o.kind), Error: o.err, Result: o.result, Duration: time.Since(o.d.began)})
	}
	return o
}

// observedSettle is settle, timed and reported to the Observer. Without an
// Observer it is settle.
func (q *Queue) observedSettle(ctx context.Context, partition int, os []outcome) (Settled, error) {
	o := q.opts.Observer
	if o == nil {
		return q.settle(ctx, partition, os)
	}
	began := time.Now()
	s, err := q.settle(ctx, partition, os)
	e := SettleEvent{Shard: partition, Tasks: len(os), Duration: time.Since(began), Err: err}
	for _, c := range s.Codes {
		switch c {
		case SettleDone:
			e.Done++
		case SettleRetry:
			e.Retried++
		case SettleDead:
			e.Dead++
		case SettleCancelled:
			e.Cancelled++
		case SettleReleased:
			e.Released++
		case SettlePostponed:
			e.Postponed++
		case SettleRejected:
			e.Rejected++
		}
	}
	o.Settled(e)
	q.observeTrimmed(partition, s.DeadTrimmed)
	if s.RetainedTrimmed > 0 {
		o.RetainedTrimmed(TrimEvent{Shard: partition, Tasks: s.RetainedTrimmed})
	}
	return s, err
}

// observeCompleted reports a Complete of key that the store settled as
// code after o was decided from a delivery at attempt.
func (q *Queue) observeCompleted(key string, attempt int, o outcome, code SettleCode) {
	if obs := q.opts.Observer; obs != nil {
		obs.Completed(CompleteEvent{Key: key, Attempt: attempt, Outcome: string(o.kind), Error: o.err, Code: code})
	}
}

// observeAdds reports the requests sendAdds has sent, once their statuses
// and errors are set: one StoreError per failed part of the batch (its
// requests share one error value), one TasksAdded per mode.
func (q *Queue) observeAdds(reqs []*AddRequest) {
	o := q.opts.Observer
	if o == nil {
		return
	}
	var add, replace AddEvent
	replace.Replace = true
	seen := map[error]bool{}
	for _, r := range reqs {
		if r.Err != nil {
			if !seen[r.Err] {
				seen[r.Err] = true
				q.observeError(OpAdd, r.Err)
			}
			continue
		}
		e := &add
		if r.Replace {
			e = &replace
		}
		if r.Status == AddStored {
			e.Stored++
		} else {
			e.Skipped++
		}
	}
	for _, e := range []AddEvent{add, replace} {
		if e.Stored+e.Skipped > 0 {
			o.TasksAdded(e)
		}
	}
}

// observeTrimmed reports n dead tasks trimmed from partition by a claim or a
// settle.
func (q *Queue) observeTrimmed(partition int, n int) {
	if o := q.opts.Observer; o != nil && n > 0 {
		o.DeadTrimmed(TrimEvent{Shard: partition, Tasks: n})
	}
}

// observeError reports a failed store call of op.
func (q *Queue) observeError(op StoreOp, err error) {
	if o := q.opts.Observer; o != nil && err != nil {
		o.StoreError(StoreErrorEvent{Op: op, Err: err})
	}
}
