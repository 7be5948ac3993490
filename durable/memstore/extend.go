package memstore

import (
	"context"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Extend is durable.Store's Extend: each lease whose token is current moves
// to lease after now and confirms its delivery.
func (s *Store) Extend(ctx context.Context, partition int, lease time.Duration, leases []durable.Lease) ([]durable.ExtendCode, error) {
	if lease <= 0 {
		return nil, fmt.Errorf("memstore: extend: lease %v", lease)
	}
	p, err := s.lock(ctx, "extend", partition)
	if err != nil {
		return nil, err
	}
	defer p.mu.Unlock()
	c := s.read()
	codes := make([]durable.ExtendCode, len(leases))
	for i, l := range leases {
		t := p.current(l.Key, l.Token)
		if t == nil {
			continue // ExtendLost
		}
		t.at, t.unconfirmed = c.after(millis(lease)), 0
		codes[i] = durable.ExtendOK
		if t.cancelled {
			codes[i] = durable.ExtendCancelled
		}
	}
	return codes, nil
}

// current is the task in flight under key whose delivery token is token, nil
// if there is none: the fencing check of Extend and Settle.
func (p *partition) current(key, token string) *task {
	t := p.tasks[key]
	if t == nil || t.place != placeLease || token == "" || t.token != token {
		return nil
	}
	return t
}
