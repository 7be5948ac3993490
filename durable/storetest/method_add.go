package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Store.Add: a new key is stored as asked, with its record; Add of a key in
// any state changes nothing; Replace starts any task over but one in flight;
// earliest is the earliest due time stored, -1 if none.
func testMethodAdd(t *testing.T, open func(t *testing.T) durable.Store) {
	t.Run("new", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{})
		pol := durable.Policy{Type: "email", Timeout: 1500 * time.Microsecond, MaxAttempts: 7,
			BackoffBase: time.Second, BackoffLimit: time.Minute}
		before := time.Now()
		reqs := []*durable.AddRequest{
			{Key: "abs", Payload: []byte("payload"), At: f.future, Policy: pol},
			{Key: "rel", At: time.Hour.Milliseconds(), Relative: true},
			{Key: "now", At: 0, Relative: true},
		}
		earliest := f.st.Add(f.ctx, reqs)
		for _, r := range reqs {
			if r.Err != nil || r.Status != durable.AddStored {
				t.Fatalf("Add %q: status %d, %v", r.Key, r.Status, r.Err)
			}
		}
		info := f.get("abs")
		if info == nil || info.State != durable.StateScheduled || !info.Due.Equal(ms(f.future)) ||
			!info.OriginalDue.Equal(ms(f.future)) || info.PayloadSize != len("payload") || info.Attempts != 0 ||
			info.Type != "email" || info.Timeout != 2*time.Millisecond || info.MaxAttempts != 7 || info.Added.IsZero() {
			t.Errorf("Get of an absolute add: %+v (want due %v, the policy's timeout rounded up to 2ms)", info, ms(f.future))
		}
		rel := f.get("rel")
		if rel == nil || rel.State != durable.StateScheduled || rel.Due.Before(before.Add(time.Hour)) || !rel.OriginalDue.Equal(rel.Due) {
			t.Errorf("Get of a relative add: %+v (want due at least an hour after %v, by the store's clock)", rel, before)
		}
		if earliest < 0 || earliest > f.future {
			t.Errorf("earliest %d, want the relative 0's due time, before %d", earliest, f.future)
		}
		if got := f.claim(time.Hour); len(got) != 1 || got["now"].Key != "now" {
			t.Errorf("claimed %v, want only the task due at once", got)
		}
	})

	// Add of a key in any state is refused; Replace stores over all but a task in flight.
	for _, replace := range []bool{false, true} {
		for _, s := range allStates {
			name := fmt.Sprintf("replace=%v/%s", replace, s)
			t.Run(name, func(t *testing.T) {
				f := newFixture(t, open, durable.Options{Retention: time.Hour})
				f.put("k", s)
				before := f.get("k")
				r := &durable.AddRequest{Key: "k", Payload: []byte("second payload"), At: f.future + 1000, Replace: replace}
				earliest := f.st.Add(f.ctx, []*durable.AddRequest{r})
				after := f.get("k")
				switch want := addWant(replace, s); {
				case r.Err != nil || r.Status != want:
					t.Errorf("status %d, %v, want %d", r.Status, r.Err, want)
				case want != durable.AddStored:
					if earliest != -1 || after == nil || after.State != s || after.PayloadSize != before.PayloadSize || after.Attempts != before.Attempts {
						t.Errorf("refused, but earliest %d, task %+v (was %+v)", earliest, after, before)
					}
				case earliest != f.future+1000 || after == nil || after.State != durable.StateScheduled || after.Attempts != 0 ||
					after.LastError != "" || len(after.History) != 0 || after.PayloadSize != len("second payload") ||
					!after.OriginalDue.Equal(ms(f.future+1000)):
					t.Errorf("replaced, but earliest %d, task %+v (want it started over)", earliest, after)
				}
			})
		}
	}

	t.Run("batch", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{})
		f.add("old", f.future, "p")
		reqs := []*durable.AddRequest{
			{Key: "b", At: f.future + 2000}, {Key: "old", At: f.past}, {Key: "a", At: f.future + 1000},
		}
		if earliest := f.st.Add(f.ctx, reqs); earliest != f.future+1000 {
			t.Errorf("earliest %d, want %d (the refused key's time is not one stored)", earliest, f.future+1000)
		}
		if got := fmt.Sprint(reqs[0].Status, reqs[1].Status, reqs[2].Status); got != "1 0 1" {
			t.Errorf("statuses %s, want 1 0 1", got)
		}
		if earliest := f.st.Add(f.ctx, []*durable.AddRequest{{Key: "a", At: f.past}}); earliest != -1 {
			t.Errorf("earliest of a call that stored nothing: %d, want -1", earliest)
		}
	})
}

// addWant is Add's status for a key in state s.
func addWant(replace bool, s durable.State) durable.AddStatus {
	switch {
	case !replace:
		return durable.AddExists
	case s == durable.StateInFlight:
		return durable.AddInFlight
	}
	return durable.AddStored
}
