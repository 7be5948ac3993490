package memstore

import (
	"context"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Settle is durable.Store's Settle: it records each outcome whose token is
// current exactly as its Kind says, the one override being a task cancelled
// while in flight, finished as cancelled. It decides nothing else: a Retry
// of a task out of attempts is a retry, and a Later past MaxPostponements
// a postponement; the Queue decides before it calls.
// Unknown kinds and negative delays are refused before anything changes.
func (s *Store) Settle(ctx context.Context, partition int, lim durable.Limits, outcomes []durable.Outcome) (durable.Settled, error) {
	for _, o := range outcomes {
		switch o.Kind {
		case durable.OutcomeDone, durable.OutcomeRetry, durable.OutcomeDead, durable.OutcomeRelease, durable.OutcomeLater:
		default:
			return durable.Settled{}, fmt.Errorf("memstore: settle %q: unknown outcome %q", o.Key, o.Kind)
		}
		if o.Delay < 0 {
			return durable.Settled{}, fmt.Errorf("memstore: settle %q: delay %d ms", o.Key, o.Delay)
		}
	}
	p, err := s.lock(ctx, "settle", partition)
	if err != nil {
		return durable.Settled{}, err
	}
	defer p.mu.Unlock()
	c := s.read()
	retainMs := millis(lim.Retention)
	out := durable.Settled{Codes: make([]durable.SettleCode, len(outcomes))}
	buried, retained := 0, 0
	for i, o := range outcomes {
		t := p.current(o.Key, o.Token)
		if t == nil {
			continue // SettleRejected: another worker owns the task, or nobody
		}
		out.Codes[i] = p.settle(t, o, c, lim, retainMs)
		switch out.Codes[i] {
		case durable.SettleDead:
			buried++
		case durable.SettleDone, durable.SettleCancelled:
			if retainMs > 0 {
				retained++
			}
		}
	}
	if buried > 0 {
		out.DeadTrimmed = p.trimDead(lim.MaxDead, trimLimit*buried)
	}
	// At least as many as this call retained, so the retained tasks cannot
	// outgrow MaxRetained, plus a few whose retention ended.
	out.RetainedTrimmed = p.trimKept(c, lim.MaxRetained, trimLimit+retained)
	out.Next = p.first(placeDue)
	return out, nil
}

// settle records o on t, in flight with o's token, and returns its code.
// Every outcome confirms the delivery (unconfirmed is reset) and ends it:
// the token is dropped.
func (p *partition) settle(t *task, o durable.Outcome, c instant, lim durable.Limits, retainMs int64) durable.SettleCode {
	kind := string(o.Kind)
	if t.cancelled {
		kind = string(durable.StateCancelled)
	}
	finished := kind == string(durable.OutcomeDone) || kind == string(durable.StateCancelled)
	// A done task without retention leaves no history to read.
	if retainMs > 0 || !finished {
		t.remember(c.now, kind, o.Err, o.Result, lim.HistoryLen, o.Waited)
	}
	t.token, t.unconfirmed = "", 0
	switch {
	case t.cancelled:
		p.retire(t, durable.StateCancelled, c, retainMs)
		return durable.SettleCancelled
	case o.Kind == durable.OutcomeDone:
		p.retire(t, durable.StateDone, c, retainMs)
		return durable.SettleDone
	case o.Kind == durable.OutcomeDead:
		p.bury(t, c, o.Err)
		return durable.SettleDead
	case o.Kind == durable.OutcomeRetry:
		t.place, t.at, t.lastErr, t.postponements = placeDue, c.after(o.Delay), o.Err, 0
		return durable.SettleRetry
	case o.Kind == durable.OutcomeRelease:
		t.place, t.at = placeDue, c.now
		t.attempts--
		return durable.SettleReleased
	default: // durable.OutcomeLater; why it waits is its last error, as a retry's
		t.place, t.at, t.lastErr = placeDue, c.after(o.Delay), o.Err
		t.attempts--
		t.postponements++
		return durable.SettlePostponed
	}
}
