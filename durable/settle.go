package durable

import "context"

// An outcome is a finished delivery on its way to the store.
type outcome struct {
	d      *delivery
	kind   OutcomeKind
	delay  int64  // retry delay, ms
	err    string // the handler's error, stored as the task's last error
	result Result // what the handler gave SetResult
}

// settleLoop sends outcomes to the store until r.outcomes is closed, batching
// whatever has queued up meanwhile into one Store.Settle per partition. Under
// load the batches grow by themselves; when idle each ack goes out at once.
//
// It frees the tasks' handler slots once they are settled. A failed call is
// reported and not retried: its tasks keep their leases, which run out, and
// the tasks are delivered again (at-least-once).
func (r *runner) settleLoop() {
	for o := range r.outcomes {
		byPartition := map[int][]outcome{o.d.partition: {o}}
		n := 1
	more:
		for n < 4*maxBatch {
			select {
			case o, ok := <-r.outcomes:
				if !ok {
					break more
				}
				byPartition[o.d.partition] = append(byPartition[o.d.partition], o)
				n++
			default:
				break more
			}
		}
		for partition, os := range byPartition {
			for len(os) > 0 {
				k := min(len(os), maxBatch)
				ctx, cancel := context.WithTimeout(r.bgctx, finalTimeout)
				if _, err := r.q.observedSettle(ctx, partition, os[:k]); err != nil {
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

// settle applies outcomes, all in partition, and returns the store's reply.
// It hints this Queue's Runs with the partition's earliest due time, so a
// retry due sooner than they know of (a short Backoff) is not left for the
// idle poll.
func (q *Queue) settle(ctx context.Context, partition int, os []outcome) (Settled, error) {
	out := make([]Outcome, len(os))
	for i, o := range os {
		out[i] = Outcome{Key: o.d.task.Key, Token: o.d.token, Kind: o.kind, Delay: o.delay, Err: o.err, Result: o.result,
			Waited: o.d.waited().Milliseconds()}
	}
	s, err := q.store.Settle(ctx, partition, q.limits, out)
	if err != nil {
		return Settled{}, err
	}
	if s.Next >= 0 {
		q.hint(partition, s.Next)
	}
	return s, nil
}
