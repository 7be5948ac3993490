package durable

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// memStore is an in-memory Store of one partition holding only what the
// periodic tests here need: scheduled tasks (Add, Cancel, Get) and the
// periodic registry, by the local clock, with lua/periodic.lua's rules. Any
// other operation panics (the embedded nil Store).
//
// It is not the package memstore, the whole in-memory Store, because these
// tests are inside package durable, which cannot import a package that
// imports durable; the tests that need a whole store are package
// durable_test, on memstore (memqueue_test.go).
type memStore struct {
	Store
	mu       sync.Mutex
	due      map[string]int64 // key -> due time, Unix ms
	registry map[string]int64 // schedule name -> pointer
}

// memQueue is a Queue with opts on a fresh memStore.
func memQueue(t testing.TB, opts Options) (*Queue, *memStore) {
	t.Helper()
	m := &memStore{due: map[string]int64{}, registry: map[string]int64{}}
	return stubQueueOn(t, m, opts), m
}

func (*memStore) Partitions() int { return 1 }

func (m *memStore) Add(_ context.Context, reqs []*AddRequest) int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	earliest := int64(-1)
	for _, r := range reqs {
		if _, ok := m.due[r.Key]; ok && !r.Replace {
			r.Status = AddExists
			continue
		}
		at := r.At
		if r.Relative {
			at += time.Now().UnixMilli()
		}
		m.due[r.Key], r.Status = at, AddStored
		if earliest < 0 || at < earliest {
			earliest = at
		}
	}
	return earliest
}

func (m *memStore) Cancel(_ context.Context, key string, _ time.Duration, _ int) (CancelResult, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	_, ok := m.due[key]
	delete(m.due, key)
	return CancelResult{Found: ok}, nil
}

func (m *memStore) Get(_ context.Context, key string) (*TaskInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	at, ok := m.due[key]
	if !ok {
		return nil, nil
	}
	return &TaskInfo{Key: key, State: StateScheduled, Due: time.UnixMilli(at)}, nil
}

func (m *memStore) Periodic(_ context.Context, op PeriodicOp, name string, from, to int64) (PeriodicState, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now().UnixMilli()
	p, ok := m.registry[name]
	switch {
	case op == PeriodicRegister && !ok:
		m.registry[name] = now
		return PeriodicState{Status: 1, Pointer: now, Now: now}, nil
	case op == PeriodicRegister:
		return PeriodicState{Pointer: p, Now: now}, nil
	case !ok:
		return PeriodicState{Status: -1, Now: now}, nil
	case op == PeriodicRead:
		return PeriodicState{Pointer: p, Now: now}, nil
	case op == PeriodicRemove:
		delete(m.registry, name)
		return PeriodicState{Pointer: p, Now: now}, nil
	case op == PeriodicAdvance && to <= from:
		return PeriodicState{}, fmt.Errorf("memStore: advance %d to %d is not after", from, to)
	case op == PeriodicAdvance && p != from:
		return PeriodicState{Pointer: p, Now: now}, nil
	case op == PeriodicAdvance:
		m.registry[name] = to
		return PeriodicState{Status: 1, Pointer: to, Now: now}, nil
	}
	return PeriodicState{}, fmt.Errorf("memStore: unknown op %q", op)
}

// setPointer sets name's pointer, as a replica would have left it.
func (m *memStore) setPointer(name string, ms int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.registry[name] = ms
}

// occurrences lists the times (Unix ms) of name's stored tasks, in order.
func (m *memStore) occurrences(name string) []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []int64
	for key := range m.due {
		if rest, ok := strings.CutPrefix(key, periodicPrefix+name+"@"); ok {
			ms, err := strconv.ParseInt(rest, 10, 64)
			if err != nil {
				panic(err)
			}
			out = append(out, ms)
		}
	}
	slices.Sort(out)
	return out
}
