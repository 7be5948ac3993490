package durable

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// Handler runs one delivery of a task. Returning nil finishes the task: it is
// deleted. Returning an error schedules another delivery after the task's
// backoff (TaskBackoff, else Options.Backoff), or moves the task to the dead
// set once it has had its max attempts (TaskMaxAttempts, else
// Options.MaxAttempts) or the error is Permanent. An error made by RetryAfter
// schedules another delivery after its delay without counting the attempt.
// One made by Detach leaves the delivery in flight, waiting for Complete
// (detach.go). A panic counts as an error.
//
// ctx is cancelled, and context.Cause tells which:
//   - with ErrHandlerTimeout when the task's timeout (TaskTimeout, else
//     Options.HandlerTimeout) passes; the delivery then counts as a failed
//     attempt at once, whatever the handler returns later;
//   - with ErrCanceled when Cancel is called for the task;
//   - with ErrLeaseLost when the lease is lost;
//   - with the cause of Run's context, ShutdownGrace after it ends (see Run).
//
// Delivery is at-least-once: a handler may see the same task again after a
// crash, a lost ack, a lost lease or a timeout, so it should be idempotent by
// Task.Key.
type Handler func(ctx context.Context, t Task) error

// Task is one delivery of a task.
type Task struct {
	Key     string
	Payload []byte
	// Attempt counts deliveries, from 1. A crash or a lost lease counts once
	// a heartbeat or a settle of that delivery reached the store; a delivery
	// released because Run was stopping does not. A lease that runs out
	// with no heartbeat or settle may have been a claim whose reply was lost
	// (no handler ran), so it is not counted, up to 3 such leases in a row:
	// a task whose every delivery crashes its worker before the first
	// heartbeat (Lease/3) dies after at most 3 more deliveries than its max
	// attempts.
	Attempt int
	// Due is when this delivery became due, by the store's clock, to the
	// millisecond: the task's time, or the retry time after a failure. The
	// delivery never starts before it.
	Due time.Time
	// OriginalDue is the due time the task was given by Add or Replace. It
	// differs from Due after a retry, a RetryAfter, a lost lease or a
	// Reschedule.
	OriginalDue time.Time
	// Type is the task's type, set with TaskType when it was added ("" if
	// none). A Mux routes on it.
	Type string
	// Token names this delivery for Complete, after the handler returns
	// Detach (detach.go); a new delivery of the task has a new one. Treat it
	// as an opaque string and as a secret: whoever holds it can finish the
	// delivery.
	Token string
}

const (
	// maxBatch caps the tasks one claim, settle or extend call moves, so a
	// backlog drains in many short store calls (on Redis, scripts of ~1 ms of
	// Redis CPU each) rather than one long one. It must also stay well under
	// the Redis store's Lua unpack limit (about 8000 values; a claim unpacks
	// 4 per task).
	maxBatch = 128
	// reapBatch caps the expired leases one claim call reclaims.
	reapBatch = 64
	// errorSleep is the pause after a failed claim (the store down or
	// failing over); the backlog is kept in the store meanwhile.
	errorSleep = 250 * time.Millisecond
	// finalTimeout bounds the store calls a stopping Run makes to settle its
	// last tasks.
	finalTimeout = 5 * time.Second
	// maxErrorText caps the last error stored with a task.
	maxErrorText = 1024
)

// Run delivers due tasks of the store to h until ctx ends or the store fails
// in a way retrying will not heal, and returns once every handler it started
// has returned and its result is settled with the store. No goroutine of Run
// outlives it.
//
// Run returns:
//   - nil after ctx ends;
//   - at once, an error wrapping ErrUnrecoverable and the store's error, when
//     a claim fails for a reason retrying will not heal (the store says which:
//     credentials or commands refused, a schema missing or not the store's,
//     a file that is not a database, a server that does not speak the
//     store's protocol);
//   - never for other errors (those wrapping ErrUnavailable: the store
//     unreachable, timing out, failing over; and any other):
//     it sends them to Options.OnError (or slog.Default at
//     warning level when OnError is nil) and retries, after 250ms for a claim
//     and at the next heartbeat for a lease; a lost ack leaves the task to be
//     delivered again after its lease.
//
// When ctx ends, or Run stops on an error, it claims nothing more (a task
// claimed by a call already under way is released unseen) and lets running
// handlers go on for Options.ShutdownGrace with their contexts intact and
// their leases extended; a handler that finishes within it is settled as
// usual. Then it cancels the handlers still running, with the cause of ctx
// (or the error), and waits for them: a task whose handler returns an error
// after that is released, due at once with its attempt not counted, so
// another Run can take it over.
//
// Run claims at most as many tasks as it has free handlers (Concurrency;
// with Options.Flow, tasks waiting for their flow keys hold none: see Flow),
// polls again at once while claims come back full, and otherwise sleeps until
// the earliest due time in the store, at most Options.PollInterval; an Add (in any form),
// Replace, Reschedule or Requeue through this Queue of an earlier task wakes
// it, as do a Resume through this Queue and a retry it schedules itself; on
// a store that is a Notifier, so do those of every other process. Any number of Runs, in any number of
// processes, may share a namespace. Run panics if h is nil.
func (q *Queue) Run(ctx context.Context, h Handler) error {
	if h == nil {
		panic("durable: Run with nil Handler")
	}
	// Handlers run under work, not ctx: ctx ending must not cancel them
	// before ShutdownGrace is over.
	bgctx := context.WithoutCancel(ctx)
	work, stopWork := context.WithCancelCause(bgctx)
	r := &runner{
		q:        q,
		h:        h,
		work:     work,
		slots:    make(chan struct{}, q.opts.Concurrency),
		freed:    make(chan struct{}, 1),
		outcomes: make(chan outcome, q.opts.Concurrency),
		leases:   map[*delivery]struct{}{},
		bgctx:    bgctx,
	}
	if f := q.opts.Flow; f != nil {
		r.gate = f.attach(q.opts.Concurrency)
		defer f.detach(r.gate)
	}
	stopBeat := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { defer bg.Done(); r.heartbeat(stopBeat) }()
	go func() { defer bg.Done(); r.settleLoop() }()

	stopListen := r.listen()
	err := r.poll(ctx)
	stopListen()
	cause := context.Cause(ctx)
	if err != nil {
		cause = err
	}
	r.shutdown(cause, stopWork) // returns once every handler has
	r.releaseWaiting()

	close(stopBeat)
	close(r.outcomes)
	bg.Wait()
	return err
}

// runner is the state of one Run.
type runner struct {
	q     *Queue
	h     Handler
	bgctx context.Context // Run's context without its cancellation
	// work is the parent of every handler's context: Run's context without
	// its cancellation, cancelled by shutdown once the grace is over.
	work context.Context

	// slots holds one element per task claimed and not yet settled, so the
	// tasks this Run holds in the store never outnumber its handlers.
	slots    chan struct{}
	freed    chan struct{} // buffered 1: a slot was released
	handlers sync.WaitGroup
	outcomes chan outcome // finished deliveries, to settleLoop
	// overdue counts handlers still running whose deliveries were settled
	// when they timed out. They keep their handler's place, so Concurrency
	// bounds running handlers even when they ignore their contexts: poll's
	// free handlers are cap(slots) - len(slots) - overdue.
	overdue atomic.Int64

	// mu guards leases, the deliveries whose handlers are running and whose
	// leases heartbeat extends.
	mu     sync.Mutex
	leases map[*delivery]struct{}
	// beat is held by heartbeat for each round of extensions and by detach
	// for its one Extend, so that a round never moves a detached lease back.
	beat sync.Mutex

	gate    *gate    // flow control (Options.Flow), nil without
	sleeper *sleeper // poll's, which flow control wakes when a waiting task may start
}

// A delivery is one claimed task: its partition, the fencing token that
// proves ownership, and the cancel func of its handler's context.
type delivery struct {
	partition int // the store's partition
	token     string
	task      Task
	policy    Policy // the task's own policy, read by claim
	// postponements counts the task's OutcomeLater in a row before this
	// delivery, read by claim.
	postponements int
	// began is when its handler started, claimedAt when the claim's reply
	// came (local clock; zero for a Complete's), claimLate how late the
	// claim was by the store's clock (set only for an Observer).
	began     time.Time
	claimedAt time.Time
	claimLate time.Duration
	// ctx is the handler's context and cancel its cancel func, made by lease.
	ctx    context.Context
	cancel context.CancelCauseFunc
	// flowKey is the task's Flow key, "" if none; unwatch stops the watch of
	// a task waiting for its key (flowrun.go).
	flowKey string
	unwatch func() bool
	// settling is set by whichever of the handler's return and its timeout
	// comes first: that one alone sends the delivery's outcome.
	settling atomic.Bool
	// result is what the handler gave SetResult, through ctx.
	result resultSlot
}

// waited is how long d waited between its claim and its handler's start.
func (d *delivery) waited() time.Duration {
	if d.claimedAt.IsZero() || d.began.IsZero() {
		return 0
	}
	return max(d.began.Sub(d.claimedAt), 0)
}

// tally is what the Queue decides d's outcome from.
func (d *delivery) tally() tally {
	return tally{attempt: d.task.Attempt, postponements: d.postponements, policy: d.policy}
}

// poll claims and starts due tasks until ctx ends, or until a claim fails in
// a way retrying will not heal, which it returns.
func (r *runner) poll(ctx context.Context) error {
	q := r.q
	sl := q.addSleeper()
	defer q.removeSleeper(sl)
	r.sleeper = sl
	n := q.parts
	// A sweep claims only the partitions that may have a task due: next[p]
	// is the store time (ms) from which p may, its last Claimed.Next lowered
	// by the hints of this Queue's calls (sleeper). Every PollInterval a
	// sweep claims them all (swept), for what other processes add, which
	// nothing tells a store that is not a Notifier. Issue 30: on 16 shards,
	// 90% of the claims per task were empty when every sweep claimed all.
	next := make([]int64, n)
	var (
		swept    time.Time // when the last sweep of every partition began
		storeNow int64     // store time of the last claim reply, ms
		storeAt  time.Time // local time that reply arrived
	)
	for ctx.Err() == nil {
		// While sweeping, any Add must wake us: we may have passed its partition.
		// Hints from here on are read at the sweep's end or the next sweep;
		// the tasks of earlier ones are in the store before our claims read it.
		sl.until.Store(sweeping)
		h := sl.hint.Swap(math.MaxInt64)
		for p := range next {
			next[p] = min(next[p], h, sl.parts[p].Swap(math.MaxInt64))
		}
		select {
		case <-sl.wake:
		default:
		}
		flowNext := r.dispatch() // tasks waiting for their flow keys go before new claims
		var (
			full, failed bool
			cut          bool // the sweep stopped before its last partition
			began        = time.Now()
			all          = storeNow == 0 || began.Sub(swept) >= q.maxSleep
			// now, as the store's time, rounded up: a partition is claimed at
			// most a millisecond early, never late.
			now = storeNow + (began.Sub(storeAt) + time.Millisecond - 1).Milliseconds()
		)
		first := rand.N(n) // no partition is always served last
		for i := range n {
			partition := (first + i) % n
			if !all && next[partition] > now {
				continue // nothing due there that this Queue knows of
			}
			free := r.free()
			if free <= 0 || ctx.Err() != nil {
				full, cut = true, true
				break
			}
			limit := min(free, maxBatch)
			// The claim is not cancelled with ctx: cancelled mid-way, it may
			// have leased tasks in the store whose reply is then lost, left in
			// flight until their lease ends (seen on PostgreSQL when SIGTERM
			// came during a claim's commit). Let it finish and hand what it
			// leased back below. It is bounded by the lease it grants: a claim
			// slower than that has leased nothing a handler could use.
			cctx, cancel := context.WithTimeout(r.bgctx, q.opts.Lease)
			c, err := q.observedClaim(cctx, partition, limit, q.opts.Lease)
			cancel()
			if err != nil {
				next[partition] = 0 // claim it again
				if ctx.Err() == nil {
					// The store wrapped ErrUnrecoverable around the errors
					// that retrying will not heal.
					if errors.Is(err, ErrUnrecoverable) {
						return err
					}
					r.report("claim", err)
					failed = true
				}
				continue
			}
			storeNow, storeAt = c.now, c.at
			for _, d := range c.tasks {
				if ctx.Err() != nil {
					// Claimed as Run was stopping: hand it straight back
					// rather than start a handler that would only be cancelled.
					r.slots <- struct{}{} // never blocks: poll claims only free slots
					r.outcomes <- outcome{d: d, kind: OutcomeRelease}
					continue
				}
				r.admit(d)
			}
			if len(c.tasks) == limit {
				full = true
			}
			next[partition] = c.next
			if c.next < 0 {
				next[partition] = math.MaxInt64
			}
		}
		if all && !cut {
			swept = began
		}
		wakeAt := swept.Add(q.maxSleep)
		for _, d := range next {
			if d != math.MaxInt64 {
				wakeAt = minTime(wakeAt, storeAt.Add(time.Duration(d-storeNow)*time.Millisecond))
			}
		}
		switch {
		case ctx.Err() != nil:
			return nil
		case r.free() <= 0:
			// Backpressure: nothing more to claim until a handler finishes.
			select {
			case <-ctx.Done():
			case <-r.freed:
			}
			continue
		case full:
			continue
		case failed:
			wakeAt = time.Now().Add(errorSleep)
		}
		if !flowNext.IsZero() {
			wakeAt = minTime(wakeAt, flowNext)
		}
		if storeNow > 0 {
			// until errs early (store time at the reply, plus the sleep from
			// now), which costs at most a spurious wake-up. Store it before
			// reading the hint: see sleeper.
			until := storeNow + time.Until(wakeAt).Milliseconds()
			sl.until.Store(until)
			if h := sl.earliestHint(); h < until {
				sl.until.Store(h)
				wakeAt = minTime(wakeAt, storeAt.Add(time.Duration(h-storeNow)*time.Millisecond))
			}
		}
		d := time.Until(wakeAt)
		if d <= 0 {
			continue
		}
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
		case <-sl.wake:
		case <-t.C:
		}
		t.Stop()
	}
	return nil
}

// free is the number of handlers poll may still start.
func (r *runner) free() int {
	return cap(r.slots) - len(r.slots) - int(r.overdue.Load())
}

// signalFreed tells a poll waiting for a free handler to look again.
func (r *runner) signalFreed() {
	select {
	case r.freed <- struct{}{}:
	default:
	}
}

// start runs the handler for d in a goroutine that holds a slot.
func (r *runner) start(d *delivery) {
	r.slots <- struct{}{} // never blocks: poll claims only free slots
	if d.ctx == nil {
		r.lease(d)
	} // else it waited for its flow key, leased
	d.task.Token = completionToken(d) // before bound: its timeout reads d.task
	// Here, not at the claim: a wait for the flow key is not the handler's
	// time (Outcome.Waited), and is part of its lateness.
	d.began = time.Now()
	r.q.observeStarted(d)
	hctx, timedOut := r.bound(d.ctx, d)
	r.handlers.Add(1)
	go func() {
		defer r.handlers.Done()
		err := r.call(hctx, d.task)
		timedOut()
		r.flowFinished(d, hctx, err)
		d.cancel(nil)
		if !d.settling.CompareAndSwap(false, true) {
			// The timeout settled it: this result comes too late to count.
			r.overdue.Add(-1)
			r.signalFreed()
			return
		}
		r.unlease(d)
		if within, ok := detachOf(err); ok {
			r.detach(d, within)
			return
		}
		r.outcomes <- r.q.observeFinished(r.outcomeOf(d, err)) // never blocks: one slot, one place
	}()
}

// lease makes d's handler context and has heartbeat extend its lease.
func (r *runner) lease(d *delivery) {
	ctx, cancel := context.WithCancelCause(r.work)
	d.ctx, d.cancel = withResultSlot(ctx, &d.result), cancel
	r.mu.Lock()
	r.leases[d] = struct{}{}
	r.mu.Unlock()
}

// unlease stops heartbeat extending d's lease.
func (r *runner) unlease(d *delivery) {
	r.mu.Lock()
	delete(r.leases, d)
	r.mu.Unlock()
}

// call runs the handler, turning a panic into an error.
func (r *runner) call(ctx context.Context, t Task) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("durable: handler panic: %v", p)
		}
	}()
	return r.h(ctx, t)
}

// outcomeOf is the outcome of a delivery whose handler returned err: a
// handler cancelled by shutdown is released, anything else decided
// (decide.go) from what Claim read of the delivery.
func (r *runner) outcomeOf(d *delivery, err error) outcome {
	o := outcome{d: d, result: d.result.take()}
	if err != nil && !IsPermanent(err) && r.work.Err() != nil {
		// Cancelled by shutdown: deliver again at once, attempt not counted.
		o.kind = OutcomeRelease
		return o
	}
	r.q.decide(&o, err, d.tally())
	return o
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}
