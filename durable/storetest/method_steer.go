package storetest

import (
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Store.Cancel finishes a task due or dead at once (retained as cancelled,
// or forgotten), forgets a retained one, marks one in flight (still in
// flight, its Extend answers cancelled); Found is false for a key in no
// state. Partition is the key's.
func testMethodCancel(t *testing.T, open func(t *testing.T) durable.Store) {
	for _, retention := range []time.Duration{0, time.Hour} {
		for _, s := range append(allStates, "") {
			name := string(s)
			if s == "" {
				name = "missing"
			}
			if retention > 0 {
				name += "/retained"
			}
			t.Run(name, func(t *testing.T) {
				f := newFixture(t, open, durable.Options{Retention: time.Hour})
				var d claimed
				if s != "" {
					d = f.put("k", s)
				}
				r, err := f.st.Cancel(f.ctx, "k", retention, 10)
				if err != nil || r.Found != (s != "") {
					t.Fatalf("Cancel: %+v, %v, want found %v", r, err, s != "")
				}
				var want durable.State
				switch s {
				case durable.StateScheduled, durable.StateRetrying, durable.StateDead:
					if retention > 0 {
						want = durable.StateCancelled
					}
				case durable.StateInFlight:
					want = durable.StateInFlight
					if r.Partition != d.part {
						t.Errorf("partition %d, want the claim's %d", r.Partition, d.part)
					}
					codes, err := f.st.Extend(f.ctx, d.part, time.Hour, []durable.Lease{{Key: "k", Token: d.Token}})
					if err != nil || codes[0] != durable.ExtendCancelled {
						t.Errorf("Extend after Cancel: %v, %v, want cancelled", codes, err)
					}
				}
				if got := f.state("k"); got != want {
					t.Errorf("after Cancel: %q, want %q", got, want)
				}
				if want == durable.StateCancelled {
					if info := f.get("k"); info.Finished.IsZero() || (s != durable.StateScheduled && info.LastError == "") {
						t.Errorf("cancelled: %+v, want a finish time and its last error kept", info)
					}
				}
			})
		}
	}
}

// Store.Reschedule moves a task due (scheduled or retrying) and nothing
// else: attempts, last error and original due time stay.
func testMethodReschedule(t *testing.T, open func(t *testing.T) durable.Store) {
	for _, s := range append(allStates, "") {
		name := string(s)
		if s == "" {
			name = "missing"
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, open, durable.Options{Retention: time.Hour})
			if s != "" {
				f.put("k", s)
			}
			before := f.get("k")
			at := f.future + 5000
			r, err := f.st.Reschedule(f.ctx, "k", at)
			want := durable.RescheduleMissing
			switch s {
			case durable.StateScheduled, durable.StateRetrying:
				want = durable.RescheduleMoved
			case durable.StateInFlight:
				want = durable.RescheduleInFlight
			}
			if err != nil || r != want {
				t.Fatalf("Reschedule: %d, %v, want %d", r, err, want)
			}
			after := f.get("k")
			if want == durable.RescheduleMoved {
				if after.State != s || !after.Due.Equal(ms(at)) || !after.OriginalDue.Equal(before.OriginalDue) ||
					after.Attempts != before.Attempts || after.LastError != before.LastError {
					t.Errorf("moved: %+v, want due %v, the rest as %+v", after, ms(at), before)
				}
			} else if s != "" && (after.State != s || !after.Due.Equal(before.Due)) {
				t.Errorf("refused, but %+v (was %+v)", after, before)
			}
		})
	}
}

// Store.Requeue moves a dead task to due now, attempts and postponements
// reset, last error kept; any other key is not requeued.
func testMethodRequeue(t *testing.T, open func(t *testing.T) durable.Store) {
	for _, s := range append(allStates, "") {
		name := string(s)
		if s == "" {
			name = "missing"
		}
		t.Run(name, func(t *testing.T) {
			f := newFixture(t, open, durable.Options{Retention: time.Hour})
			if s == durable.StateDead {
				// Dead after a postponement: the requeue resets both counts.
				f.add("k", f.past, "p")
				f.settle(f.claimOne("k", time.Hour), durable.Outcome{Kind: durable.OutcomeLater, Err: "wait"})
				f.settle(f.claimOne("k", time.Hour), durable.Outcome{Kind: durable.OutcomeDead, Err: "gone"})
			} else if s != "" {
				f.put("k", s)
			}
			before := time.Now()
			ok, due, err := f.st.Requeue(f.ctx, "k")
			if err != nil || ok != (s == durable.StateDead) {
				t.Fatalf("Requeue: %v, %v, want %v", ok, err, s == durable.StateDead)
			}
			if !ok {
				if got := f.state("k"); got != s {
					t.Errorf("not requeued, but %q, was %q", got, s)
				}
				return
			}
			info := f.get("k")
			if info.State != durable.StateRetrying || info.Attempts != 0 || info.LastError != "gone" ||
				due < before.Add(-time.Minute).UnixMilli() || !info.Due.Equal(ms(due)) {
				t.Errorf("requeued: %+v, due %d, want retrying (its last error kept), no attempts, due now", info, due)
			}
			if c := f.claimOne("k", time.Hour); c.Attempt != 1 || c.Postponements != 0 {
				t.Errorf("delivery after Requeue: attempt %d, %d postponements, want 1, 0", c.Attempt, c.Postponements)
			}
		})
	}
}
