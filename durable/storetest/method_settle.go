package storetest

import (
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Store.Settle records each outcome whose token is current exactly as its
// Kind says; the one override is a task cancelled in flight, finished as
// cancelled. It decides nothing: a Retry of a task out of attempts and a
// Later past MaxPostponements are recorded as they are (the Queue decides
// before it calls).
func testMethodSettle(t *testing.T, open func(t *testing.T) durable.Store) {
	const delay = 2 * time.Hour
	result := durable.Result{Code: 201, Body: []byte("made")}
	for _, c := range []struct {
		name    string
		lim     func(*durable.Limits)
		cancel  bool // Cancel the task in flight first
		o       durable.Outcome
		code    durable.SettleCode
		state   durable.State // "": forgotten
		attempt int           // Attempts after it
		lastErr string
		due     time.Duration // a due time at least this after the settle
	}{
		{name: "done forgotten", o: durable.Outcome{Kind: durable.OutcomeDone}, code: durable.SettleDone},
		{name: "done retained", lim: retain, o: durable.Outcome{Kind: durable.OutcomeDone, Result: result},
			code: durable.SettleDone, state: durable.StateDone, attempt: 2},
		{name: "retry", o: durable.Outcome{Kind: durable.OutcomeRetry, Delay: delay.Milliseconds(), Err: "again"},
			code: durable.SettleRetry, state: durable.StateRetrying, attempt: 2, lastErr: "again", due: delay},
		{name: "retry out of attempts is a retry", lim: func(l *durable.Limits) { l.MaxAttempts = 1 },
			o:    durable.Outcome{Kind: durable.OutcomeRetry, Delay: delay.Milliseconds(), Err: "again"},
			code: durable.SettleRetry, state: durable.StateRetrying, attempt: 2, lastErr: "again", due: delay},
		{name: "dead", o: durable.Outcome{Kind: durable.OutcomeDead, Err: "gone"},
			code: durable.SettleDead, state: durable.StateDead, attempt: 2, lastErr: "gone"},
		{name: "release", o: durable.Outcome{Kind: durable.OutcomeRelease},
			code: durable.SettleReleased, state: durable.StateRetrying, attempt: 1, lastErr: "first"},
		{name: "later", o: durable.Outcome{Kind: durable.OutcomeLater, Delay: delay.Milliseconds(), Err: "not now"},
			code: durable.SettlePostponed, state: durable.StateRetrying, attempt: 1, lastErr: "not now", due: delay},
		{name: "cancelled in flight, retained", lim: retain, cancel: true, o: durable.Outcome{Kind: durable.OutcomeRetry, Err: "x"},
			code: durable.SettleCancelled, state: durable.StateCancelled, attempt: 2, lastErr: "first"},
		{name: "cancelled in flight, forgotten", cancel: true, o: durable.Outcome{Kind: durable.OutcomeDone},
			code: durable.SettleCancelled},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, open, durable.Options{MaxAttempts: 5})
			// The second delivery of a task whose first failed ("first"),
			// retried at once; then the case's limits.
			f.add("k", f.past, "p")
			f.settle(f.claimOne("k", time.Hour), durable.Outcome{Kind: durable.OutcomeRetry, Err: "first"})
			d := f.claimOne("k", time.Hour)
			if c.lim != nil {
				c.lim(&f.lim)
			}
			if c.cancel {
				if r, err := f.st.Cancel(f.ctx, "k", f.lim.Retention, f.lim.MaxRetained); err != nil || !r.Found {
					t.Fatalf("Cancel: %+v, %v", r, err)
				}
			}
			before := time.Now()
			s := f.settle(d, c.o)
			if s.Codes[0] != c.code {
				t.Errorf("code %d, want %d", s.Codes[0], c.code)
			}
			info := f.get("k")
			if c.state == "" {
				if info != nil {
					t.Errorf("task %+v, want it forgotten", info)
				}
				return
			}
			if info == nil || info.State != c.state || info.Attempts != c.attempt || info.LastError != c.lastErr {
				t.Fatalf("task %+v, want %s, %d attempts, last error %q", info, c.state, c.attempt, c.lastErr)
			}
			if c.due > 0 && info.Due.Before(before.Add(c.due)) {
				t.Errorf("due %v, before the settle's time plus %v (%v)", info.Due, c.due, before.Add(c.due))
			}
			if c.state == durable.StateRetrying && (s.Next < 0 || s.Next > info.Due.UnixMilli()) {
				t.Errorf("Next %d, want at or before the task's due time %v", s.Next, info.Due)
			}
			if c.state == durable.StateDead || c.state == durable.StateDone || c.state == durable.StateCancelled {
				if info.Finished.IsZero() {
					t.Errorf("finished %s without a Finished time: %+v", c.state, info)
				}
			}
			h := info.History
			if len(h) != 2 || h[0].Outcome != "retry" || h[0].Error != "first" || h[1].Attempt != 2 ||
				h[1].Outcome != historyOutcome(c.o.Kind, c.cancel) || h[1].Error != c.o.Err ||
				h[1].Result.Code != c.o.Result.Code || string(h[1].Result.Body) != string(c.o.Result.Body) {
				t.Errorf("history %+v, want the first retry, then attempt 2 as %s", h, historyOutcome(c.o.Kind, c.cancel))
			}
			if c.o.Kind == durable.OutcomeRelease { // its attempt given back: the next is the second again
				if again := f.claimOne("k", time.Hour); again.Attempt != 2 {
					t.Errorf("delivery after a release: attempt %d, want 2", again.Attempt)
				}
			}
		})
	}

	t.Run("rejected", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{})
		d := f.inFlight("k", "p")
		f.add("sched", f.future, "")
		s, err := f.st.Settle(f.ctx, d.part, f.lim, []durable.Outcome{
			{Key: "k", Token: d.Token + "0", Kind: durable.OutcomeDone},
			{Key: "sched", Token: d.Token, Kind: durable.OutcomeDead},
			{Key: "missing", Token: d.Token, Kind: durable.OutcomeDone},
			{Key: "k", Token: d.Token, Kind: durable.OutcomeRetry, Delay: time.Hour.Milliseconds(), Err: "e"},
			{Key: "k", Token: d.Token, Kind: durable.OutcomeDone}, // stale once the retry ended the delivery
		})
		if err != nil || len(s.Codes) != 5 || s.Codes[0] != 0 || s.Codes[1] != 0 || s.Codes[2] != 0 ||
			s.Codes[3] != durable.SettleRetry || s.Codes[4] != 0 {
			t.Fatalf("Settle: %+v, %v, want [0 0 0 %d 0]", s, err, durable.SettleRetry)
		}
		if f.state("k") != durable.StateRetrying || f.state("sched") != durable.StateScheduled {
			t.Errorf("after stale settles: k %s, sched %s", f.state("k"), f.state("sched"))
		}
	})

	t.Run("unknown kind", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{})
		d := f.inFlight("k", "p")
		_, err := f.st.Settle(f.ctx, d.part, f.lim, []durable.Outcome{
			{Key: "k", Token: d.Token, Kind: durable.OutcomeDone}, {Key: "k", Token: d.Token, Kind: "retyr"},
		})
		if err == nil {
			t.Error("Settle of an unknown kind: no error")
		}
		if s := f.state("k"); s != durable.StateInFlight {
			t.Errorf("after a refused Settle: %s, want in flight (nothing written)", s)
		}
	})

	// Each partition keeps at most MaxDead dead tasks and MaxRetained
	// retained ones, the oldest going first; the replies count them.
	t.Run("trims", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{})
		f.lim.MaxDead, f.lim.MaxRetained, f.lim.Retention = 1, 1, time.Hour
		n := f.st.Partitions() + 1 // two in one partition at least
		for _, kind := range []durable.OutcomeKind{durable.OutcomeDead, durable.OutcomeDone} {
			parts := map[int]string{} // the newest key of each partition
			trimmed := 0
			for i := range n {
				key := string(kind) + string(rune('a'+i))
				d := f.inFlight(key, "")
				s := f.settle(d, durable.Outcome{Kind: kind})
				trimmed += s.DeadTrimmed + s.RetainedTrimmed
				parts[d.part] = key
			}
			if trimmed != n-len(parts) {
				t.Errorf("%s: %d trimmed, want %d (%d tasks over %d partitions, 1 kept each)", kind, trimmed, n-len(parts), n, len(parts))
			}
			for _, key := range parts {
				if f.get(key) == nil {
					t.Errorf("%s: %q, its partition's newest, was trimmed", kind, key)
				}
			}
		}
	})

	// Outcome.Waited moves the history entry's Start after the claim by that
	// much, never past its End: End - Start is the handler's time, not the
	// wait for a Flow key (issue 31).
	t.Run("history start after the wait", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{HistoryLen: 5})
		f.add("k", f.past, "")
		c := f.claimOne("k", time.Hour)
		claimed := f.get("k").Started
		time.Sleep(30 * time.Millisecond) // the store's clock passes at least as much
		f.settle(c, durable.Outcome{Kind: durable.OutcomeRetry, Err: "a", Waited: 10})
		h := f.get("k").History
		if len(h) != 1 || !h[0].Start.Equal(claimed.Add(10*time.Millisecond)) || !h[0].End.After(h[0].Start) {
			t.Errorf("history %+v, want Start at the claim %v plus 10ms", h, claimed)
		}
		f.settle(f.claimOne("k", time.Hour), durable.Outcome{Kind: durable.OutcomeRetry, Err: "b", Waited: time.Hour.Milliseconds()})
		if h := f.get("k").History; len(h) != 2 || !h[1].Start.Equal(h[1].End) {
			t.Errorf("history %+v, want Start capped at End", h)
		}
	})

	t.Run("history length", func(t *testing.T) {
		f := newFixture(t, open, durable.Options{HistoryLen: 2})
		f.add("k", f.past, "")
		for i := range 3 {
			f.settle(f.claimOne("k", time.Hour), durable.Outcome{Kind: durable.OutcomeRetry, Err: string(rune('a' + i))})
		}
		if h := f.get("k").History; len(h) != 2 || h[0].Attempt != 2 || h[1].Attempt != 3 || h[1].Error != "c" {
			t.Errorf("history %+v, want attempts 2 and 3", h)
		}
	})
}

// retain sets a retention of an hour.
func retain(l *durable.Limits) { l.Retention = time.Hour }

// historyOutcome is a delivery's outcome in its history entry.
func historyOutcome(k durable.OutcomeKind, cancelled bool) string {
	if cancelled {
		return string(durable.StateCancelled)
	}
	return string(k)
}
