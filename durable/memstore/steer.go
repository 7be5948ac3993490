package memstore

import (
	"context"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Cancel is durable.Store's Cancel: a task due or dead is finished as
// cancelled at once, a retained one forgotten, one in flight marked (its
// Settle finishes it as cancelled, its Extend answers ExtendCancelled).
func (s *Store) Cancel(ctx context.Context, key string, retention time.Duration, maxRetained int) (durable.CancelResult, error) {
	part := s.partitionOf(key)
	p, err := s.lock(ctx, "cancel", part)
	if err != nil {
		return durable.CancelResult{}, err
	}
	defer p.mu.Unlock()
	c := s.read()
	out := durable.CancelResult{Partition: part}
	if t := p.tasks[key]; t != nil {
		out.Found = true
		switch t.place {
		case placeDue, placeDead:
			p.retire(t, durable.StateCancelled, c, millis(retention))
		case placeLease:
			t.cancelled = true
		case placeKept:
			delete(p.tasks, key)
		}
	}
	out.RetainedTrimmed = p.trimKept(c, maxRetained, trimLimit+1)
	return out, nil
}

// Reschedule is durable.Store's Reschedule: a task due moves to at, all else
// kept (its original due time is Add's).
func (s *Store) Reschedule(ctx context.Context, key string, at int64) (durable.RescheduleResult, error) {
	p, err := s.lock(ctx, "reschedule", s.partitionOf(key))
	if err != nil {
		return 0, err
	}
	defer p.mu.Unlock()
	t := p.tasks[key]
	switch {
	case t == nil:
		return durable.RescheduleMissing, nil
	case t.place == placeLease:
		return durable.RescheduleInFlight, nil
	case t.place != placeDue:
		return durable.RescheduleMissing, nil
	}
	t.at = at
	return durable.RescheduleMoved, nil
}

// Requeue is durable.Store's Requeue: a dead task is due now, with its
// attempts and postponements reset and its last error kept.
func (s *Store) Requeue(ctx context.Context, key string) (requeued bool, due int64, err error) {
	p, err := s.lock(ctx, "requeue", s.partitionOf(key))
	if err != nil {
		return false, 0, err
	}
	defer p.mu.Unlock()
	c := s.read()
	t := p.tasks[key]
	if t == nil || t.place != placeDead {
		return false, c.now, nil
	}
	t.place, t.at, t.attempts, t.postponements, t.unconfirmed = placeDue, c.now, 0, 0, 0
	return true, c.now, nil
}

// Pause is durable.Store's Pause: it sets or clears every partition's flag.
func (s *Store) Pause(ctx context.Context, paused bool) error {
	for i := range s.parts {
		p, err := s.lock(ctx, "pause", i)
		if err != nil {
			return err
		}
		p.paused = paused
		p.mu.Unlock()
	}
	return nil
}
