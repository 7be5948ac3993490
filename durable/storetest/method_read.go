package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Store.Get tells each state with its times: Due for a task due or in
// flight (its lease's end), Finished for one dead or retained, Started once
// delivered, the record's fields always; nil for a key in no state.
func testMethodGet(t *testing.T, open func(t *testing.T) durable.Store) {
	f := newFixture(t, open, durable.Options{Retention: time.Hour})
	if info := f.get("missing"); info != nil {
		t.Errorf("Get of a missing key: %+v, want nil", info)
	}
	for _, s := range allStates {
		key := "k " + string(s)
		f.put(key, s)
		info := f.get(key)
		delivered := s != durable.StateScheduled && s != durable.StateCancelled
		due := s == durable.StateScheduled || s == durable.StateRetrying || s == durable.StateInFlight
		switch {
		case info.Key != key || info.State != s:
			t.Errorf("%s: %+v", s, info)
		case info.Added.IsZero() || info.OriginalDue.IsZero() || info.PayloadSize != 1:
			t.Errorf("%s: record missing in %+v", s, info)
		case info.Due.IsZero() != !due:
			t.Errorf("%s: Due %v (want it set only while due or in flight)", s, info.Due)
		case info.Finished.IsZero() == (s == durable.StateDead || s == durable.StateDone || s == durable.StateCancelled):
			t.Errorf("%s: Finished %v (want it set only when dead or finished)", s, info.Finished)
		case info.Started.IsZero() == delivered:
			t.Errorf("%s: Started %v (want it set once delivered)", s, info.Started)
		}
	}
}

// Store.List pages through each state in (time, key) order, every task
// once, each as Get tells it, whatever the partitions.
func testMethodList(t *testing.T, open func(t *testing.T) durable.Store) {
	f := newFixture(t, open, durable.Options{Retention: time.Hour})
	want := map[durable.State][]string{}
	for _, s := range allStates {
		for i := range 5 {
			key := fmt.Sprintf("%s %d", s, i)
			f.put(key, s)
			want[s] = append(want[s], key)
		}
	}
	// Five scheduled tasks at one time: ties in key order.
	for i := range 5 {
		key := fmt.Sprintf("tie %d", 4-i)
		f.add(key, f.future+time.Minute.Milliseconds(), "")
		want[durable.StateScheduled] = append(want[durable.StateScheduled], key)
	}
	for _, s := range allStates {
		var got []durable.TaskInfo
		var after *durable.ListPos
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatalf("List %s never ended", s)
			}
			page, next, err := f.st.List(f.ctx, s, after, 3)
			if err != nil {
				t.Fatalf("List %s: %v", s, err)
			}
			if len(page) > 3 {
				t.Errorf("List %s: a page of %d, limit 3", s, len(page))
			}
			got = append(got, page...)
			if next == nil {
				break
			}
			after = next
		}
		seen := map[string]bool{}
		for i, info := range got {
			if info.State != s || seen[info.Key] {
				t.Errorf("List %s: %+v (twice: %v)", s, info, seen[info.Key])
			}
			seen[info.Key] = true
			if i > 0 && !listedBefore(s, got[i-1], info) {
				t.Errorf("List %s: %q before %q, not in (time, key) order", s, got[i-1].Key, info.Key)
			}
		}
		if len(seen) != len(want[s]) {
			t.Errorf("List %s: %d tasks, want %d", s, len(seen), len(want[s]))
		}
	}
}

// listedBefore reports whether a may be listed before b in state s: by
// their time in s, then by key. Get tells that time for a task due or in
// flight (Due) and a dead one (Finished, its death); a retained task is
// listed by its retention's end, Finished plus the retention rounded from
// the store's clock, which may put it a millisecond after a task that
// finished in the same millisecond with a greater key.
func listedBefore(s durable.State, a, b durable.TaskInfo) bool {
	switch s {
	case durable.StateScheduled, durable.StateRetrying, durable.StateInFlight:
		return a.Due.Before(b.Due) || a.Due.Equal(b.Due) && a.Key < b.Key
	case durable.StateDead:
		return a.Finished.Before(b.Finished) || a.Finished.Equal(b.Finished) && a.Key < b.Key
	}
	return !a.Finished.After(b.Finished.Add(time.Millisecond))
}

// Store.Dead lists up to limit dead tasks per partition, oldest first in
// each, with payload, attempts, time of death and last error.
func testMethodDead(t *testing.T, open func(t *testing.T) durable.Store) {
	f := newFixture(t, open, durable.Options{})
	for i := range 3 {
		key := fmt.Sprint("d", i)
		f.add(key, f.past, "payload "+key)
		f.settle(f.claimOne(key, time.Hour), durable.Outcome{Kind: durable.OutcomeDead, Err: "err " + key})
	}
	dead, err := f.st.Dead(f.ctx, 10)
	if err != nil || len(dead) != 3 {
		t.Fatalf("Dead: %+v, %v, want 3", dead, err)
	}
	for _, d := range dead {
		if string(d.Payload) != "payload "+d.Key || d.Attempts != 1 || d.LastError != "err "+d.Key || d.Died.IsZero() {
			t.Errorf("dead task %+v", d)
		}
	}
	one, err := f.st.Dead(f.ctx, 1)
	if err != nil || len(one) < 1 || len(one) > f.st.Partitions() {
		t.Errorf("Dead(1): %d tasks, %v, want 1 per partition holding one", len(one), err)
	}
}

// Store.Stats counts by place (due now or later, in flight, dead, retained)
// and by state, with the oldest due task's lateness and the pause flag, one
// snapshot per partition in partition order.
func testMethodStats(t *testing.T, open func(t *testing.T) durable.Store) {
	f := newFixture(t, open, durable.Options{Retention: time.Hour})
	for _, s := range allStates {
		f.put("k "+string(s), s)
	}
	f.add("late", f.past, "")
	shards, err := f.st.Stats(f.ctx)
	if err != nil || len(shards) != f.st.Partitions() {
		t.Fatalf("Stats: %d shards, %v, want %d", len(shards), err, f.st.Partitions())
	}
	for i, s := range shards {
		if s.Shard != i {
			t.Errorf("shard %d at index %d", s.Shard, i)
		}
	}
	got := f.stats()
	want := durable.StateCounts{Scheduled: 2, Retrying: 1, InFlight: 1, Dead: 1, Done: 1, Cancelled: 1}
	if got.States != want || got.Due != 1 || got.Scheduled != 2 || got.InFlight != 1 || got.Dead != 1 || got.Retained != 2 || got.Paused {
		t.Errorf("Stats %+v, want states %+v, 1 due now, 2 later, 1 in flight, 1 dead, 2 retained", got, want)
	}
	// late is due an hour before the test began: its lateness is at least
	// that, by any clock near this machine's.
	if got.OldestDue < 59*time.Minute {
		t.Errorf("OldestDue %v, want about an hour", got.OldestDue)
	}
	if err := f.st.Pause(f.ctx, true); err != nil {
		t.Fatal(err)
	}
	if !f.stats().Paused {
		t.Error("Stats after Pause: not paused")
	}
}
