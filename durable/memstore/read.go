package memstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Get is durable.Store's Get; nil, nil if key is in no place.
func (s *Store) Get(ctx context.Context, key string) (*durable.TaskInfo, error) {
	p, err := s.lock(ctx, "get", s.partitionOf(key))
	if err != nil {
		return nil, err
	}
	defer p.mu.Unlock()
	t := p.tasks[key]
	if t == nil {
		return nil, nil
	}
	info := t.info()
	return &info, nil
}

// info is what Get tells of t.
func (t *task) info() durable.TaskInfo {
	info := durable.TaskInfo{
		Key: t.key, Type: t.policy.Type, State: t.state(),
		OriginalDue: msTime(t.origDue), Attempts: t.attempts, LastError: t.lastErr,
		PayloadSize: t.size, Added: msTime(t.added), Started: t.delivery.Start,
		Timeout: t.policy.Timeout, MaxAttempts: t.policy.MaxAttempts,
		BackoffBase: t.policy.BackoffBase, BackoffLimit: t.policy.BackoffLimit,
		Postponements: t.postponements,
	}
	switch t.place {
	case placeDue, placeLease:
		info.Due = msTime(t.at)
	case placeDead:
		info.Finished = msTime(t.at)
	case placeKept:
		info.Finished = msTime(t.finished)
	}
	for _, d := range t.history {
		d.Result.Body = append([]byte(nil), d.Result.Body...)
		if len(d.Result.Body) == 0 {
			d.Result.Body = nil
		}
		info.History = append(info.History, d)
	}
	return info
}

// List is durable.Store's List, in one consistent read: it holds every
// partition's lock, in partition order, while it reads.
func (s *Store) List(ctx context.Context, state durable.State, after *durable.ListPos, limit int) (tasks []durable.TaskInfo, next *durable.ListPos, err error) {
	switch state {
	case durable.StateScheduled, durable.StateRetrying, durable.StateInFlight,
		durable.StateDead, durable.StateDone, durable.StateCancelled:
	default:
		return nil, nil, fmt.Errorf("memstore: list: unknown state %q", state)
	}
	if limit < 1 {
		return nil, nil, fmt.Errorf("memstore: list: limit %d", limit)
	}
	for i := range s.parts {
		p, err := s.lock(ctx, "list", i)
		if err != nil {
			return nil, nil, err
		}
		defer p.mu.Unlock()
	}
	var found []*task
	for _, p := range s.parts {
		for _, t := range p.sorted(placeOf(state)) {
			if t.state() == state && (after == nil || comparePos(t, *after) > 0) {
				found = append(found, t)
			}
		}
	}
	slices.SortFunc(found, compareTasks)
	for _, t := range found[:min(limit, len(found))] {
		tasks = append(tasks, t.info())
	}
	if len(found) > limit {
		last := found[limit-1]
		next = &durable.ListPos{At: last.at, Key: last.key}
	}
	return tasks, next, nil
}

// comparePos compares t's position (at, key) with pos.
func comparePos(t *task, pos durable.ListPos) int {
	if c := cmp.Compare(t.at, pos.At); c != 0 {
		return c
	}
	return strings.Compare(t.key, pos.Key)
}

// Dead is durable.Store's Dead: up to limit dead tasks of each partition,
// oldest first in each.
func (s *Store) Dead(ctx context.Context, limit int) ([]durable.DeadTask, error) {
	var out []durable.DeadTask
	for i := range s.parts {
		p, err := s.lock(ctx, "dead", i)
		if err != nil {
			return nil, err
		}
		dead := p.sorted(placeDead)
		for _, t := range dead[:min(max(limit, 0), len(dead))] {
			out = append(out, durable.DeadTask{
				Key: t.key, Payload: append([]byte(nil), t.payload...), Attempts: t.attempts,
				Died: msTime(t.at), LastError: t.lastErr,
			})
		}
		p.mu.Unlock()
	}
	return out, nil
}

// Stats is durable.Store's Stats: one snapshot per partition, each under its
// lock.
func (s *Store) Stats(ctx context.Context) ([]durable.ShardStats, error) {
	out := make([]durable.ShardStats, len(s.parts))
	for i := range s.parts {
		p, err := s.lock(ctx, "stats", i)
		if err != nil {
			return nil, err
		}
		out[i] = p.stats(i, s.read())
		p.mu.Unlock()
	}
	return out, nil
}

func (p *partition) stats(i int, c instant) durable.ShardStats {
	st := durable.ShardStats{Shard: i, Paused: p.paused}
	oldest := int64(-1)
	for _, t := range p.tasks {
		switch t.place {
		case placeDue:
			if t.at <= c.now {
				st.Due++
				if oldest < 0 || t.at < oldest {
					oldest = t.at
				}
			} else {
				st.Scheduled++
			}
		case placeLease:
			st.InFlight++
		case placeDead:
			st.Dead++
		case placeKept:
			st.Retained++
		}
		switch t.state() {
		case durable.StateScheduled:
			st.States.Scheduled++
		case durable.StateRetrying:
			st.States.Retrying++
		case durable.StateInFlight:
			st.States.InFlight++
		case durable.StateDead:
			st.States.Dead++
		case durable.StateDone:
			st.States.Done++
		case durable.StateCancelled:
			st.States.Cancelled++
		}
	}
	if oldest >= 0 {
		st.OldestDue = msDuration(c.now - oldest)
	}
	return st
}
