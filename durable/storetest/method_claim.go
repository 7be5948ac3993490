package storetest

import (
	"cmp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Store.Claim: it leases the tasks due by its clock, earliest first, each
// with a fresh token, its attempt counted and its record; Next is the
// partition's earliest due time or lease end; paused, it leases nothing.
func testMethodClaim(t *testing.T, open func(t *testing.T) durable.Store) {
	t.Run("due", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{})
		pol := durable.Policy{Type: "t", MaxAttempts: 5}
		reqs := []*durable.AddRequest{
			{Key: "c", Payload: []byte("pc"), At: f.past + 2000}, {Key: "a", Payload: []byte("pa"), At: f.past, Policy: pol},
			{Key: "b", Payload: []byte("pb"), At: f.past + 1000}, {Key: "b2", Payload: []byte("pb2"), At: f.past + 1000},
			{Key: "later", At: f.future},
		}
		f.st.Add(f.ctx, reqs)
		seen := map[string]durable.ClaimedTask{}
		for p := range f.st.Partitions() {
			c, err := f.st.Claim(f.ctx, p, 10, time.Hour, f.lim)
			if err != nil {
				t.Fatalf("Claim partition %d: %v", p, err)
			}
			if !slices.IsSortedFunc(c.Tasks, func(x, y durable.ClaimedTask) int {
				return cmp.Or(cmp.Compare(x.Due, y.Due), strings.Compare(x.Key, y.Key))
			}) {
				t.Errorf("partition %d leased %+v: not earliest first", p, c.Tasks)
			}
			for _, ct := range c.Tasks {
				seen[ct.Key] = ct
				if info := f.get(ct.Key); info == nil || info.State != durable.StateInFlight || c.Next < 0 || c.Next > info.Due.UnixMilli() {
					t.Errorf("partition %d: Next %d, %q in flight %+v (want Next at or before its lease end)", p, c.Next, ct.Key, info)
				}
			}
			if len(c.Tasks) > 0 && c.Now < f.past+2000 {
				t.Errorf("Now %d before the due times it leased", c.Now)
			}
		}
		for _, r := range reqs[:4] {
			ct, ok := seen[r.Key]
			if !ok || ct.Attempt != 1 || ct.Due != r.At || ct.OriginalDue != r.At || string(ct.Payload) != string(r.Payload) ||
				ct.Policy != r.Policy || ct.Postponements != 0 || ct.Token == "" {
				t.Errorf("claimed %q as %+v (want attempt 1, due and originally due %d, its payload and policy)", r.Key, ct, r.At)
			}
		}
		if _, ok := seen["later"]; ok || len(seen) != 4 {
			t.Errorf("claimed %d tasks: want the 4 due, never the one due tomorrow", len(seen))
		}
		if info := f.get("later"); info == nil || info.State != durable.StateScheduled {
			t.Errorf("the task due tomorrow: %+v", info)
		}
	})

	t.Run("limit", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{})
		for _, k := range []string{"a", "b", "c"} {
			f.add(k, f.past, "")
		}
		leased := map[string]bool{}
		for claims := 0; len(leased) < 3; claims++ {
			if claims > 3*f.st.Partitions() {
				t.Fatalf("leased %v after %d claims of limit 1, want all 3", leased, claims)
			}
			for p := range f.st.Partitions() {
				c, err := f.st.Claim(f.ctx, p, 1, time.Hour, f.lim)
				if err != nil || len(c.Tasks) > 1 {
					t.Fatalf("Claim limit 1: %+v, %v", c, err)
				}
				for _, ct := range c.Tasks {
					leased[ct.Key] = true
				}
			}
		}
	})

	t.Run("next", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{})
		f.add("later", f.future, "")
		for p := range f.st.Partitions() {
			c, err := f.st.Claim(f.ctx, p, 10, time.Hour, f.lim)
			if err != nil || len(c.Tasks) != 0 || (c.Next != -1 && c.Next != f.future) {
				t.Errorf("Claim partition %d: %+v, %v (want nothing leased, Next -1 or the task's time)", p, c, err)
			}
		}
	})

	t.Run("paused", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{})
		f.add("k", f.past, "")
		if err := f.st.Pause(f.ctx, true); err != nil {
			t.Fatal(err)
		}
		for p := range f.st.Partitions() {
			c, err := f.st.Claim(f.ctx, p, 10, time.Hour, f.lim)
			if err != nil || !c.Paused || len(c.Tasks) != 0 || c.Next != -1 {
				t.Errorf("Claim paused partition %d: %+v, %v (want paused, nothing leased, Next -1)", p, c, err)
			}
		}
		if err := f.st.Pause(f.ctx, false); err != nil {
			t.Fatal(err)
		}
		f.claimOne("k", time.Hour)
	})

	t.Run("postponements", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{})
		f.add("k", f.past, "")
		// Laters due at once (Delay 0) then a retry: each claim tells the
		// postponements in a row before it.
		for i, kind := range []durable.OutcomeKind{durable.OutcomeLater, durable.OutcomeLater, durable.OutcomeRetry} {
			c := f.claimOne("k", time.Hour)
			if c.Postponements != i || c.Attempt != 1 {
				t.Errorf("delivery %d: attempt %d, %d postponements, want attempt 1, %d", i+1, c.Attempt, c.Postponements, i)
			}
			f.settle(c, durable.Outcome{Kind: kind, Err: "wait"})
		}
		if c := f.claimOne("k", time.Hour); c.Postponements != 0 || c.Attempt != 2 {
			t.Errorf("after a retry: attempt %d, %d postponements, want attempt 2, none (a retry resets them)", c.Attempt, c.Postponements)
		}
	})

	// Unconfirmed claims give their attempt back only lim.MaxUnconfirmed
	// times in a row: a worker that dies before every first heartbeat
	// still uses up the task's attempts.
	t.Run("reap/unconfirmed past the bound", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{})
		f.lim.MaxUnconfirmed = 1
		f.add("k", f.past, "")
		for want := range 2 {
			f.claimOne("k", durable.MinLease)
			if err := f.st.Pause(f.ctx, true); err != nil {
				t.Fatal(err)
			}
			Eventually(t, "the lease reaped", func() bool {
				f.claim(time.Hour)
				return f.state("k") != durable.StateInFlight
			})
			if info := f.get("k"); info.Attempts != want || info.State != durable.StateRetrying {
				t.Errorf("after %d unconfirmed claims: %+v, want %d attempts", want+1, info, want)
			}
			if err := f.st.Pause(f.ctx, false); err != nil {
				t.Fatal(err)
			}
		}
	})

	// A reap that buries tasks out of attempts keeps each partition's dead
	// set to MaxDead as a settle does, and Claimed.DeadTrimmed counts what
	// it dropped (the Observer's DeadTrimmed).
	t.Run("reap/dead past MaxDead", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{MaxAttempts: 1, MaxDead: 1})
		keys := []string{"a", "b", "c", "d", "e", "f"}
		for _, k := range keys {
			f.add(k, f.past, "p")
		}
		leased := 0
		for p := range f.st.Partitions() { // the claims reap nothing: no lease has run out yet
			c, err := f.st.Claim(f.ctx, p, len(keys), durable.MinLease, f.lim)
			if err != nil {
				t.Fatalf("Claim partition %d: %v", p, err)
			}
			var ls []durable.Lease
			for _, ct := range c.Tasks {
				ls = append(ls, durable.Lease{Key: ct.Key, Token: ct.Token})
			}
			leased += len(ls)
			if len(ls) == 0 {
				continue
			}
			if codes, err := f.st.Extend(f.ctx, p, durable.MinLease, ls); err != nil || slices.Contains(codes, durable.ExtendLost) {
				t.Fatalf("Extend partition %d: %v, %v", p, codes, err)
			}
		}
		if leased != len(keys) {
			t.Fatalf("leased %d of %d due tasks", leased, len(keys))
		}
		if err := f.st.Pause(f.ctx, true); err != nil { // reap, lease nothing
			t.Fatal(err)
		}
		trimmed := 0
		Eventually(t, "every lease reaped", func() bool {
			for p := range f.st.Partitions() {
				c, err := f.st.Claim(f.ctx, p, 10, time.Hour, f.lim)
				if err != nil {
					t.Fatalf("Claim partition %d: %v", p, err)
				}
				trimmed += c.DeadTrimmed
			}
			return f.stats().InFlight == 0
		})
		if st := f.stats(); int(st.Dead)+trimmed != len(keys) || int(st.Dead) > f.st.Partitions() || st.Due != 0 {
			t.Errorf("after the reaps: %+v, %d reported trimmed; want at most one dead per partition, the rest reported", st, trimmed)
		}
	})

	// A lease that runs out is reaped by a later claim: due again with
	// "lease expired", its attempt counted only if a heartbeat or settle
	// confirmed it; dead when out of attempts; finished if cancelled.
	for _, c := range []struct {
		name      string
		confirmed bool
		max       int
		cancel    bool
		state     durable.State
		attempts  int
	}{
		{"unconfirmed", false, 3, false, durable.StateRetrying, 0},
		{"confirmed", true, 3, false, durable.StateRetrying, 1},
		{"confirmed out of attempts", true, 1, false, durable.StateDead, 1},
		{"unconfirmed out of attempts", false, 1, false, durable.StateRetrying, 0},
		{"cancelled", true, 3, true, durable.StateCancelled, 1},
	} {
		t.Run("reap/"+c.name, func(t *testing.T) {
			f := newFixture(t, open, durable.Options{MaxAttempts: c.max, Retention: time.Hour})
			f.add("k", f.past, "p")
			ct := f.claimOne("k", durable.MinLease)
			if c.confirmed {
				if codes, err := f.st.Extend(f.ctx, ct.part, durable.MinLease, []durable.Lease{{Key: "k", Token: ct.Token}}); err != nil || codes[0] != durable.ExtendOK {
					t.Fatalf("Extend: %v, %v", codes, err)
				}
			}
			if c.cancel {
				if r, err := f.st.Cancel(f.ctx, "k", f.lim.Retention, f.lim.MaxRetained); err != nil || !r.Found {
					t.Fatalf("Cancel: %+v, %v", r, err)
				}
			}
			if err := f.st.Pause(f.ctx, true); err != nil { // reap, lease nothing
				t.Fatal(err)
			}
			Eventually(t, "the lease reaped", func() bool {
				f.claim(time.Hour)
				return f.state("k") != durable.StateInFlight
			})
			info := f.get("k")
			wantErr := "lease expired"
			if c.cancel {
				wantErr = ""
			}
			if info.State != c.state || info.Attempts != c.attempts || info.LastError != wantErr {
				t.Errorf("reaped: %+v, want %s with %d attempts, last error %q", info, c.state, c.attempts, wantErr)
			}
			if h := info.History; len(h) != 1 || h[0].Outcome != "lease expired" || h[0].Attempt != 1 {
				t.Errorf("history %+v, want one delivery, attempt 1, lease expired", h)
			}
		})
	}
}
