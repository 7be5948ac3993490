package storetest

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Model: random sequences of every Store operation on a few keys, each
// reply checked against the model (model.go), then Get, List and Stats of
// every key against it at the end. Leases are an hour (none runs out: the
// reaping is Claim's subtests'), delays 0 or a day, due times an hour ago or
// tomorrow, so that no check depends on when the store's clock reads. The
// seed is logged: a failure replays with it.
func testModel(t *testing.T, open func(t *testing.T) durable.Store) {
	for run := range 4 {
		seed := uint64(time.Now().UnixNano())
		t.Run(fmt.Sprint(run), func(t *testing.T) {
			t.Logf("seed %d", seed)
			modelRun(t, open, seed, run%2 == 1, 250)
		})
	}
}

// modelKeys are the keys the operations pick from: few, so that they meet.
var modelKeys = []string{"a", "b", "c", "d", "e", "f", "ключ", "k/1"}

// modelRun runs n random operations on a fresh store from seed.
func modelRun(t *testing.T, open func(t *testing.T) durable.Store, seed uint64, retain bool, n int) {
	opts := durable.Options{}
	if retain {
		opts.Retention = time.Hour
	}
	f := newFixture(t, open, opts)
	f.lim.MaxDead, f.lim.MaxRetained = 1000, 1000 // no trims: the model keeps every task
	rng := rand.New(rand.NewPCG(seed, seed))
	m := &model{tasks: map[string]*modelTask{}, retention: retain, historyLen: f.lim.HistoryLen}
	testNow := time.Now().UnixMilli()
	var stale []claimed // past deliveries, for settles and extends with old tokens
	pick := func() string { return modelKeys[rng.IntN(len(modelKeys))] }
	delay := func() int64 {
		if rng.IntN(2) == 0 {
			return 0
		}
		return 24*time.Hour.Milliseconds() + rng.Int64N(1000)
	}
	at := func() int64 {
		if rng.IntN(2) == 0 {
			return f.past - rng.Int64N(1000)
		}
		return f.future + rng.Int64N(1000)
	}
	// delivery is key's current delivery in the model, or a stale one.
	delivery := func(key string) claimed {
		if mt := m.tasks[key]; mt != nil && mt.state == durable.StateInFlight && rng.IntN(4) > 0 {
			return claimed{durable.ClaimedTask{Key: key, Token: mt.token}, mt.part}
		}
		for _, c := range stale {
			if c.Key == key {
				return c
			}
		}
		return claimed{durable.ClaimedTask{Key: key, Token: "1"}, 0}
	}

	for i := range n {
		key := pick()
		fail := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("op %d on %q: %s", i, key, fmt.Sprintf(format, args...))
		}
		switch op := rng.IntN(12); op {
		case 0, 1: // Add or Replace, at a time or after a delay
			size, replace := rng.IntN(16), rng.IntN(3) == 0
			r := &durable.AddRequest{Key: key, Payload: []byte(strings.Repeat("x", size)), At: at(), Replace: replace}
			due := dueTime{exact: r.At}
			if rng.IntN(4) == 0 {
				r.Relative, r.At = true, delay()
				due = dueTime{now: r.At == 0}
				if r.At > 0 {
					due = dueTime{after: time.Now().UnixMilli() + r.At}
				}
			}
			want := m.add(key, size, due, replace)
			f.st.Add(f.ctx, []*durable.AddRequest{r})
			if r.Err != nil || r.Status != want {
				fail("Add (replace %v): %d, %v, want %d", replace, r.Status, r.Err, want)
			}
		case 2, 3: // Claim every partition
			got := map[string]bool{}
			for p := range f.st.Partitions() {
				c, err := f.st.Claim(f.ctx, p, 100, time.Hour, f.lim)
				if err != nil || c.Paused != m.paused {
					fail("Claim %d: %+v, %v (paused: %v)", p, c, err, m.paused)
				}
				for _, ct := range c.Tasks {
					mt := m.tasks[ct.Key]
					if mt == nil || !mt.inDue() || !mt.due.claimable(testNow) || m.paused || got[ct.Key] {
						fail("Claim leased %q, which the model has as %+v", ct.Key, mt)
					}
					if ct.Attempt != mt.attempts+1 || ct.Postponements != mt.postponements || len(ct.Payload) != mt.size ||
						mt.due.exact != 0 && ct.Due != mt.due.exact || ct.Due > c.Now {
						fail("Claim of %q: %+v, the model has %+v", ct.Key, ct, mt)
					}
					got[ct.Key] = true
					m.claim(ct.Key, ct.Token, p)
					stale = append(stale, claimed{ct, p})
				}
			}
			for k, mt := range m.tasks {
				if mt.inDue() && mt.due.claimable(testNow) && !m.paused && !got[k] {
					fail("Claim left %q due: %+v", k, mt)
				}
			}
		case 4, 5, 6: // Settle, of the current delivery mostly
			d := delivery(key)
			kinds := []durable.OutcomeKind{durable.OutcomeDone, durable.OutcomeRetry, durable.OutcomeDead, durable.OutcomeRelease, durable.OutcomeLater}
			o := durable.Outcome{Key: key, Token: d.Token, Kind: kinds[rng.IntN(len(kinds))], Err: fmt.Sprint("err ", i)}
			if o.Kind == durable.OutcomeRetry || o.Kind == durable.OutcomeLater {
				o.Delay = delay()
			}
			before := time.Now().UnixMilli()
			want := m.settle(o, before)
			s, err := f.st.Settle(f.ctx, d.part, f.lim, []durable.Outcome{o})
			if err != nil || len(s.Codes) != 1 || s.Codes[0] != want {
				fail("Settle %s: %+v, %v, want code %d", o.Kind, s, err, want)
			}
		case 7: // Extend
			d := delivery(key)
			want := m.extend(key, d.Token)
			codes, err := f.st.Extend(f.ctx, d.part, time.Hour, []durable.Lease{{Key: key, Token: d.Token}})
			if err != nil || len(codes) != 1 || codes[0] != want {
				fail("Extend: %v, %v, want %d", codes, err, want)
			}
		case 8: // Cancel
			want := m.cancel(key)
			r, err := f.st.Cancel(f.ctx, key, f.lim.Retention, f.lim.MaxRetained)
			if err != nil || r.Found != want {
				fail("Cancel: %+v, %v, want found %v", r, err, want)
			}
		case 9: // Reschedule or Requeue
			if rng.IntN(2) == 0 {
				due := at()
				want := m.reschedule(key, due)
				if r, err := f.st.Reschedule(f.ctx, key, due); err != nil || r != want {
					fail("Reschedule: %d, %v, want %d", r, err, want)
				}
			} else {
				want := m.requeue(key)
				if ok, _, err := f.st.Requeue(f.ctx, key); err != nil || ok != want {
					fail("Requeue: %v, %v, want %v", ok, err, want)
				}
			}
		case 10: // Get
			modelGet(t, f, m, key, fmt.Sprintf("op %d", i))
		case 11: // Pause or resume, rarely
			if rng.IntN(3) == 0 {
				m.paused = !m.paused
				if err := f.st.Pause(f.ctx, m.paused); err != nil {
					fail("Pause(%v): %v", m.paused, err)
				}
			}
		}
	}

	// The end: every key, every state's listing and the counts agree.
	for _, key := range modelKeys {
		modelGet(t, f, m, key, "the end")
	}
	for _, s := range allStates {
		var want []string
		for k, mt := range m.tasks {
			if mt.state == s {
				want = append(want, k)
			}
		}
		var got []string
		var after *durable.ListPos
		for pages := 0; pages < 100; pages++ {
			page, next, err := f.st.List(f.ctx, s, after, 2)
			if err != nil {
				t.Fatalf("List %s: %v", s, err)
			}
			for _, info := range page {
				got = append(got, info.Key)
			}
			if next == nil {
				break
			}
			after = next
		}
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("List %s: %q, the model has %q", s, got, want)
		}
	}
	if got := f.stats(); got.States != m.counts() || got.Paused != m.paused {
		t.Errorf("Stats %+v, the model counts %+v, paused %v", got, m.counts(), m.paused)
	}
}

// modelGet checks the store's Get of key against the model.
func modelGet(t *testing.T, f *fixture, m *model, key, when string) {
	t.Helper()
	info := f.get(key)
	mt := m.tasks[key]
	switch {
	case mt == nil && info == nil:
		return
	case mt == nil || info == nil:
		t.Fatalf("%s: Get %q: %+v, the model has %+v", when, key, info, mt)
	}
	var history []string
	for _, d := range info.History {
		history = append(history, d.Outcome)
	}
	if info.State != mt.state || info.Attempts != mt.attempts || info.LastError != mt.lastErr || info.PayloadSize != mt.size ||
		!slices.Equal(history, mt.history) {
		t.Fatalf("%s: Get %q: %+v, the model has %+v", when, key, info, mt)
	}
	if mt.inDue() {
		d := info.Due.UnixMilli()
		if mt.due.exact != 0 && d != mt.due.exact || mt.due.after != 0 && d < mt.due.after {
			t.Fatalf("%s: Get %q: due %v, the model has %+v", when, key, info.Due, mt.due)
		}
	}
}
