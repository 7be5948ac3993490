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
	outcomeLater   outcomeKind = "later"   // RetryAfter: deliver again after delay, attempt not counted
)

// Codes returned by the settle script, one per outcome.
const (
	settleRejected  = 0 // the token was stale: another worker owns the task
	settleDone      = 1
	settleRetry     = 2
	settleDead      = 3
	settleCancelled = 4
	settleReleased  = 5
)

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
				if _, err := r.q.settle(ctx, shard, os[:k]); err != nil {
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
func (q *Queue) settle(ctx context.Context, shard int, os []outcome) ([]int64, error) {
	args := make([]any, 0, 2+5*len(os))
	args = append(args, q.opts.MaxDead, q.opts.MaxAttempts)
	for _, o := range os {
		args = append(args, o.d.task.Key, o.d.token, string(o.kind), o.delay, o.err)
	}
	codes, err := settleScript.Run(ctx, q.client, q.keys[shard], args...).Int64Slice()
	if err == nil && len(codes) != len(os)+1 {
		err = fmt.Errorf("unexpected reply %v", codes)
	}
	if err != nil {
		return nil, fmt.Errorf("rediswheel: settle shard %d: %w", shard, err)
	}
	if next := codes[len(os)]; next >= 0 {
		q.hint(next)
	}
	return codes[:len(os)], nil
}
