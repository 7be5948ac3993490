package storetest

import (
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Store.Pause sets or clears every partition's flag: paused, a claim leases
// nothing (it still reaps) and Stats says so; resumed, claims lease again.
func testMethodPause(t *testing.T, open func(t *testing.T) durable.Store) {
	f := newFixture(t, open, durable.Options{})
	f.add("k", f.past, "")
	for _, paused := range []bool{true, true, false, false, true, false} {
		if err := f.st.Pause(f.ctx, paused); err != nil {
			t.Fatalf("Pause(%v): %v", paused, err)
		}
		shards, err := f.st.Stats(f.ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range shards {
			if s.Paused != paused {
				t.Errorf("after Pause(%v): shard %d paused %v", paused, s.Shard, s.Paused)
			}
		}
	}
	if err := f.st.Pause(f.ctx, true); err != nil {
		t.Fatal(err)
	}
	if got := f.claim(time.Hour); len(got) != 0 {
		t.Errorf("claimed %v while paused", got)
	}
	if err := f.st.Pause(f.ctx, false); err != nil {
		t.Fatal(err)
	}
	f.claimOne("k", time.Hour)
}

// Store.Periodic: each step on the registry of schedules, atomic per name,
// as durable.PeriodicOp says, on the store's clock.
func testMethodPeriodic(t *testing.T, open func(t *testing.T) durable.Store) {
	f := newFixture(t, open, durable.Options{})
	before := time.Now().Add(-time.Minute).UnixMilli() // a lower bound on the store's now, with room for its clock
	reg, err := f.st.Periodic(f.ctx, durable.PeriodicRegister, "p", 0, 0)
	if err != nil || reg.Status != 1 || reg.Pointer != reg.Now || reg.Now < before {
		t.Fatalf("register: %+v, %v, want created at now", reg, err)
	}
	p0 := reg.Pointer
	for _, c := range []struct {
		name     string
		op       durable.PeriodicOp
		key      string
		from, to int64
		status   int64
		pointer  int64
		fails    bool
	}{
		{name: "register again", op: durable.PeriodicRegister, key: "p", status: 0, pointer: p0},
		{name: "read", op: durable.PeriodicRead, key: "p", status: 0, pointer: p0},
		{name: "advance", op: durable.PeriodicAdvance, key: "p", from: p0, to: p0 + 1000, status: 1, pointer: p0 + 1000},
		{name: "advance from a moved pointer", op: durable.PeriodicAdvance, key: "p", from: p0, to: p0 + 2000, status: 0, pointer: p0 + 1000},
		{name: "advance backwards", op: durable.PeriodicAdvance, key: "p", from: p0 + 1000, to: p0 + 1000, fails: true},
		{name: "read after", op: durable.PeriodicRead, key: "p", status: 0, pointer: p0 + 1000},
		{name: "read missing", op: durable.PeriodicRead, key: "q", status: -1},
		{name: "advance missing", op: durable.PeriodicAdvance, key: "q", from: 1, to: 2, status: -1},
		{name: "remove", op: durable.PeriodicRemove, key: "p", status: 0, pointer: p0 + 1000},
		{name: "remove again", op: durable.PeriodicRemove, key: "p", status: -1},
		{name: "read removed", op: durable.PeriodicRead, key: "p", status: -1},
	} {
		got, err := f.st.Periodic(f.ctx, c.op, c.key, c.from, c.to)
		switch {
		case c.fails:
			if err == nil {
				t.Errorf("%s: %+v, want an error", c.name, got)
			}
		case err != nil || got.Status != c.status || got.Pointer != c.pointer || got.Now < before:
			t.Errorf("%s: %+v, %v, want status %d, pointer %d, the store's now", c.name, got, err, c.status, c.pointer)
		}
	}
}
