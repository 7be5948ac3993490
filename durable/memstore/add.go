package memstore

import (
	"context"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Add is durable.Store's Add, atomic per key: each request locks its key's
// partition. Add (Replace false) stores a key in no place; Replace stores
// over anything but a task in flight, starting it over (no attempts,
// postponements, last error or history).
func (s *Store) Add(ctx context.Context, reqs []*durable.AddRequest) (earliest int64) {
	earliest = -1
	for _, r := range reqs {
		p, err := s.lock(ctx, "add", s.partitionOf(r.Key))
		if err != nil {
			r.Status, r.Err = 0, fmt.Errorf("%w (key %q)", err, r.Key)
			continue
		}
		c := s.read()
		r.Status, r.Err = p.add(r, c), nil
		p.mu.Unlock()
		if r.Status != durable.AddStored {
			continue
		}
		at := r.At
		if r.Relative {
			at = c.after(r.At)
		}
		if earliest < 0 || at < earliest {
			earliest = at
		}
	}
	return earliest
}

// add stores r by its mode and returns its status.
func (p *partition) add(r *durable.AddRequest, c instant) durable.AddStatus {
	if old, ok := p.tasks[r.Key]; ok {
		switch {
		case !r.Replace:
			return durable.AddExists
		case old.place == placeLease:
			return durable.AddInFlight
		}
	}
	at := r.At
	if r.Relative {
		at = c.after(r.At)
	}
	pol := r.Policy // kept to the ms, rounded up, as every store keeps it
	pol.Timeout = msDuration(millis(pol.Timeout))
	pol.BackoffBase = msDuration(millis(pol.BackoffBase))
	pol.BackoffLimit = msDuration(millis(pol.BackoffLimit))
	p.tasks[r.Key] = &task{
		key: r.Key, place: placeDue, at: at,
		payload: append([]byte(nil), r.Payload...), size: len(r.Payload),
		added: c.now, origDue: at, policy: pol,
	}
	return durable.AddStored
}
