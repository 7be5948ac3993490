package rediswheel

import (
	"context"
	"fmt"
)

// An outcome is a finished delivery on its way to Redis.
type outcome struct {
	d     *delivery
	kind  outcomeKind
	delay int64  // retry delay, ms
	err   string // the handler's error, stored as the task's last error
}

// outcomeKind names what the settle script does with a finished delivery;
// lua/settle.lua spells the same names and rejects any other.
type outcomeKind string

const (
	outcomeDone    outcomeKind = "done"    // the handler returned nil: the task is finished
	outcomeRetry   outcomeKind = "retry"   // failed: deliver again after delay (or bury when out of attempts)
	outcomeDead    outcomeKind = "dead"    // Permanent: bury at once
	outcomeRelease outcomeKind = "release" // Run stopped: deliver again at once, attempt not counted
	outcomeLater   outcomeKind = "later"   // RetryAfter: deliver again after delay, attempt not counted (bounded: MaxPostponements)
)

// A settleCode is what the settle script did with one outcome; lua/settle.lua
// returns the same numbers.
type settleCode = int64

const (
	settleRejected  settleCode = 0 // the token was stale: another worker owns the task
	settleDone      settleCode = 1 // finished (forgotten, or retained)
	settleRetry     settleCode = 2 // due again after the delay, attempt counted
	settleDead      settleCode = 3 // buried
	settleCancelled settleCode = 4 // Cancel came first: finished as cancelled, never retried
	settleReleased  settleCode = 5 // due again at once, attempt not counted
	settlePostponed settleCode = 6 // later: due again after the delay, attempt not counted
)

// MaxPostponements bounds the RetryAfter postponements of one task (counted
// in its ctl field r|, reset by Requeue and Replace): past it a RetryAfter
// counts as a failed attempt, so a receiver that says "not now" forever
// cannot keep a task alive forever. 100 postponements of at most
// MaxRetryAfter cover a receiver that throttles for days, or one that asks
// for a minute every minute for well over an hour.
const MaxPostponements = 100

// settled is the reply of one settle call.
type settled struct {
	codes []settleCode // one per outcome, in order
	// trimmed counts the dead tasks this call dropped from the dead set (the
	// oldest, past Options.MaxDead); trimmedKept the retained tasks it
	// forgot (retention over, or past Options.MaxRetained). For the metrics.
	trimmed, trimmedKept int
}

// settleLoop sends outcomes to Redis until r.outcomes is closed, batching
// whatever has queued up meanwhile into one script call per shard. Under
// load the batches grow by themselves; when idle each ack goes out at once.
//
// It frees the tasks' handler slots once they are settled. A failed call is
// reported and not retried: its tasks keep their leases, which run out, and
// the tasks are delivered again (at-least-once).
func (r *runner) settleLoop() {
	for o := range r.outcomes {
		byShard := map[int][]outcome{o.d.shard: {o}}
		n := 1
	more:
		for n < 4*maxBatch {
			select {
			case o, ok := <-r.outcomes:
				if !ok {
					break more
				}
				byShard[o.d.shard] = append(byShard[o.d.shard], o)
				n++
			default:
				break more
			}
		}
		for shard, os := range byShard {
			for len(os) > 0 {
				k := min(len(os), maxBatch)
				ctx, cancel := context.WithTimeout(r.bgctx, finalTimeout)
				if _, err := r.q.observedSettle(ctx, shard, os[:k]); err != nil {
					r.report("settle", err)
				}
				cancel()
				os = os[k:]
			}
		}
		for range n {
			<-r.slots
		}
		select {
		case r.freed <- struct{}{}:
		default:
		}
	}
}

// settle applies outcomes, all in shard, and returns one settle code each. It
// hints this Queue's Runs with the shard's earliest due time, so a retry due
// sooner than they know of (a short Backoff) is not left for the idle poll.
//
// The arguments and the reply are lua/settle.lua's: change both together.
func (q *Queue) settle(ctx context.Context, shard int, os []outcome) (settled, error) {
	args := make([]any, 0, 6+5*len(os))
	args = append(args, q.opts.MaxDead, q.opts.MaxAttempts, q.opts.HistoryLen,
		durationMilliCeil(q.opts.Retention), q.opts.MaxRetained, MaxPostponements)
	for _, o := range os {
		args = append(args, o.d.task.Key, o.d.token, string(o.kind), o.delay, o.err)
	}
	v, err := settleScript.Run(ctx, q.client, q.keys[shard], args...).Int64Slice()
	if err == nil && len(v) != len(os)+3 {
		err = fmt.Errorf("unexpected reply %v", v)
	}
	if err != nil {
		return settled{}, fmt.Errorf("rediswheel: settle shard %d: %w", shard, err)
	}
	n := len(os)
	if next := v[n]; next >= 0 {
		q.hint(next)
	}
	return settled{codes: v[:n], trimmed: int(v[n+1]), trimmedKept: int(v[n+2])}, nil
}
