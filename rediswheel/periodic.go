package rediswheel

import (
	"context"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
)

var periodicScript = loadScript("periodic")

// registryKey is the namespace's periodic registry: its own hash tag, so its
// slot is none of the shards'.
func (s *Store) registryKey() string { return "{" + s.ns + ".periodic}:sched" }

// Periodic runs one op of lua/periodic.lua on the registry (durable.Store's
// Periodic); advance passes from and to, the other ops neither.
func (s *Store) Periodic(ctx context.Context, op durable.PeriodicOp, name string, from, to int64) (_ durable.PeriodicState, err error) {
	defer unavailable(&err)
	args := []any{string(op), name}
	if op == durable.PeriodicAdvance {
		args = append(args, from, to)
	}
	v, err := periodicScript.Run(ctx, s.client, []string{s.registryKey()}, args...).Int64Slice()
	if err == nil && len(v) != 3 {
		err = fmt.Errorf("unexpected reply %v", v)
	}
	if err != nil {
		return durable.PeriodicState{}, fmt.Errorf("rediswheel: periodic %s %q: %w", op, name, err)
	}
	return durable.PeriodicState{Status: v[0], Pointer: v[1], Now: v[2]}, nil
}
