package memstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Claim is durable.Store's Claim: it reaps up to lim.ReapBatch expired
// leases, then, unless the partition is paused, leases up to limit tasks due
// by now, earliest first (then by key), each with a fresh token.
func (s *Store) Claim(ctx context.Context, partition, limit int, lease time.Duration, lim durable.Limits) (durable.Claimed, error) {
	if limit < 0 || lease <= 0 {
		return durable.Claimed{}, fmt.Errorf("memstore: claim: limit %d, lease %v", limit, lease)
	}
	p, err := s.lock(ctx, "claim", partition)
	if err != nil {
		return durable.Claimed{}, err
	}
	defer p.mu.Unlock()
	c := s.read()
	out := durable.Claimed{Now: c.now, Paused: p.paused}
	if buried := p.reap(c, lim); buried > 0 {
		out.DeadTrimmed = p.trimDead(lim.MaxDead, trimLimit*buried)
	}
	if !p.paused {
		for _, t := range p.sorted(placeDue) {
			if len(out.Tasks) == limit || t.at > c.now {
				break
			}
			out.Tasks = append(out.Tasks, s.lease(t, c, millis(lease), lim.WorkerID))
		}
	}
	// While paused, due tasks are not waited for: the worker polls at its
	// idle pace until Resume.
	out.Next = -1
	if !p.paused {
		out.Next = p.first(placeDue)
	}
	if l := p.first(placeLease); l >= 0 && (out.Next < 0 || l < out.Next) {
		out.Next = l
	}
	return out, nil
}

// lease moves t, due, into lease until leaseMs after c, with a fresh token,
// its attempt counted and its delivery opened.
func (s *Store) lease(t *task, c instant, leaseMs int64, worker string) durable.ClaimedTask {
	due := t.at
	t.place, t.at = placeLease, c.after(leaseMs)
	t.token = strconv.FormatInt(s.token.Add(1), 10)
	t.attempts++
	t.unconfirmed++
	t.delivery = durable.Delivery{Attempt: t.attempts, Worker: worker, Start: msTime(c.now)}
	return durable.ClaimedTask{
		Key: t.key, Payload: append([]byte(nil), t.payload...), Attempt: t.attempts,
		Due: due, OriginalDue: t.origDue, Token: t.token, Policy: t.policy,
		Postponements: t.postponements,
	}
}

// reap handles up to lim.ReapBatch leases that ran out by c, and returns how
// many it buried. A lease that ran out means its worker died or stalled, or
// that the claim's reply never reached it: the task goes back to due at once
// with last error "lease expired" (to dead when out of attempts; finished
// as cancelled when Cancel came meanwhile), its token dropped so that the
// late worker's Settle and Extend are refused. Its attempt is given back
// when no Extend or Settle confirmed the claim, for up to
// lim.MaxUnconfirmed claims in a row: maybe no handler ran.
func (p *partition) reap(c instant, lim durable.Limits) (buried int) {
	for i, t := range p.sorted(placeLease) {
		if i >= lim.ReapBatch || t.at > c.now {
			break
		}
		t.remember(c.now, "lease expired", "", durable.Result{}, lim.HistoryLen, 0)
		if t.cancelled {
			p.retire(t, durable.StateCancelled, c, millis(lim.Retention))
			continue
		}
		if t.unconfirmed > 0 && t.unconfirmed <= lim.MaxUnconfirmed {
			t.attempts--
		}
		maxAttempts := t.policy.MaxAttempts
		if maxAttempts == 0 {
			maxAttempts = lim.MaxAttempts
		}
		if t.attempts >= maxAttempts {
			p.bury(t, c, "lease expired") // and unconfirmed reset: a Requeue starts the bound over
			buried++
			continue
		}
		t.place, t.at, t.token, t.lastErr = placeDue, c.now, "", "lease expired"
	}
	return buried
}
