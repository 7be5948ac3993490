package memstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Periodic is durable.Store's Periodic, atomic per name (one lock for the
// registry): see durable.PeriodicOp.
func (s *Store) Periodic(ctx context.Context, op durable.PeriodicOp, name string, from, to int64) (durable.PeriodicState, error) {
	if err := ctx.Err(); err != nil {
		return durable.PeriodicState{}, fmt.Errorf("memstore: periodic: %w", err)
	}
	if name == "" {
		return durable.PeriodicState{}, errors.New("memstore: periodic: missing name")
	}
	s.regMu.Lock()
	defer s.regMu.Unlock()
	now := s.read().now
	p, ok := s.registry[name]
	switch {
	case op == durable.PeriodicAdvance && to <= from:
		// Never backwards: a pointer that went back would let an occurrence
		// be added again after it ran.
		return durable.PeriodicState{}, fmt.Errorf("memstore: periodic advance: %d is not after %d", to, from)
	case op == durable.PeriodicRegister && !ok:
		s.registry[name] = now
		return durable.PeriodicState{Status: 1, Pointer: now, Now: now}, nil
	case op == durable.PeriodicRegister:
		return durable.PeriodicState{Pointer: p, Now: now}, nil
	case op != durable.PeriodicRead && op != durable.PeriodicAdvance && op != durable.PeriodicRemove:
		return durable.PeriodicState{}, fmt.Errorf("memstore: periodic: unknown op %q", op)
	case !ok:
		return durable.PeriodicState{Status: -1, Now: now}, nil
	case op == durable.PeriodicRemove:
		delete(s.registry, name)
		return durable.PeriodicState{Pointer: p, Now: now}, nil
	case op == durable.PeriodicAdvance && p == from:
		s.registry[name] = to
		return durable.PeriodicState{Status: 1, Pointer: to, Now: now}, nil
	}
	return durable.PeriodicState{Pointer: p, Now: now}, nil // read, or an advance another replica beat
}
