package pgwheel

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/stretchr/testify/require"
)

// TestModel holds every operation against a trivially correct reference:
// random sequences of adds, replaces, claims, extends, settles (current and
// stale tokens, every outcome), cancels, reschedules, requeues and pauses on
// a few keys, each followed by a comparison of every key's Get (state,
// times, attempts, last error, history) with the model, and every few steps
// of List and Stats. Due times are an hour in the past or the future, so
// which tasks a claim may lease is certain; times the database sets from
// its clock are checked against the clock read just before and after the
// operation, then adopted. Run with and without retention.
func TestModel(t *testing.T) {
	for _, retention := range []time.Duration{0, time.Hour} {
		t.Run(fmt.Sprintf("retention=%v", retention), func(t *testing.T) {
			seed := uint64(time.Now().UnixNano())
			t.Logf("seed %d", seed)
			m := newModel(t, retention, rand.New(rand.NewPCG(seed, 7)))
			for step := 0; step < 400; step++ {
				m.step(step)
				m.compareGets()
				if step%20 == 19 {
					m.compareLists()
					m.compareStats()
				}
			}
		})
	}
}

const (
	modelMaxAttempts = 3
	modelHistoryLen  = 3
	modelLease       = time.Hour
)

// interval is what the model knows of a time: exactly t when lo == hi.
type interval struct{ lo, hi time.Time }

func exactly(t time.Time) interval { return interval{t, t} }

type mtask struct {
	place                         string // due, lease, dead, kept
	at                            interval
	finished                      interval // kept: when it finished
	originalDue                   time.Time
	attempts, postponements       int
	token                         int64
	cancelReq                     bool
	lastErr, result, payload, typ string
	ownMax                        int
	deliveryAttempt               int
	history                       []string // "attempt outcome error"
}

func (mt *mtask) state() durable.State {
	switch mt.place {
	case "due":
		if mt.attempts > 0 || mt.lastErr != "" {
			return durable.StateRetrying
		}
		return durable.StateScheduled
	case "lease":
		return durable.StateInFlight
	case "dead":
		return durable.StateDead
	}
	return durable.State(mt.result)
}

type model struct {
	t         *testing.T
	s         *Store
	r         *rand.Rand
	retention time.Duration
	keys      []string
	tasks     map[string]*mtask
	oldTokens []int64
	paused    bool
	base      time.Time
	lo, hi    time.Time // the database clock around the current operation
}

func newModel(t *testing.T, retention time.Duration, r *rand.Rand) *model {
	m := &model{t: t, s: newStore(t), r: r, retention: retention, tasks: map[string]*mtask{}}
	for i := 0; i < 8; i++ {
		m.keys = append(m.keys, fmt.Sprintf("key-%d", i))
	}
	m.base = dbClock(t).Truncate(time.Millisecond)
	return m
}

// around reads the clock before and after op.
func (m *model) around(op func()) {
	m.lo = dbClock(m.t)
	op()
	m.hi = dbClock(m.t)
}

// clockAfter is what the model knows of a time the operation set to its
// clock + d (now for d = 0, now_up + d otherwise).
func (m *model) clockAfter(d time.Duration) interval {
	return interval{m.lo.Truncate(time.Millisecond).Add(d), timeCeil(m.hi).Add(d)}
}

func (m *model) key() string { return m.keys[m.r.IntN(len(m.keys))] }

// anyTime is an hour or so in the past (due) or the future.
func (m *model) anyTime() time.Time {
	off := time.Duration(m.r.IntN(1000)) * time.Millisecond
	if m.r.IntN(2) == 0 {
		return m.base.Add(-time.Hour + off)
	}
	return m.base.Add(time.Hour + off)
}

func (m *model) anyDelay() time.Duration {
	if m.r.IntN(2) == 0 {
		return 0
	}
	return time.Hour
}

func (m *model) leased() (string, *mtask) {
	var ks []string
	for k, mt := range m.tasks {
		if mt.place == "lease" {
			ks = append(ks, k)
		}
	}
	if len(ks) == 0 {
		return "", nil
	}
	slices.Sort(ks)
	k := ks[m.r.IntN(len(ks))]
	return k, m.tasks[k]
}

func (m *model) step(step int) {
	t, ctx := m.t, testCtx(m.t)
	switch op := m.r.IntN(20); {
	case op < 4: // Add or Replace
		key, at, replace := m.key(), m.anyTime(), m.r.IntN(4) == 0
		pol := durable.Policy{}
		if m.r.IntN(3) == 0 {
			pol = durable.Policy{Type: "typed", MaxAttempts: 1 + m.r.IntN(4)}
		}
		payload := fmt.Sprintf("payload %d", step)
		nt := NewTask{Key: key, Payload: []byte(payload), At: at, Policy: pol}
		var got []Added
		var err error
		m.around(func() {
			if replace {
				got, err = m.s.replace(ctx, nt)
			} else {
				got, err = m.s.add(ctx, nt)
			}
		})
		require.NoError(t, err)
		want := durable.AddStored
		mt := m.tasks[key]
		switch {
		case mt != nil && !replace:
			want = durable.AddExists
		case mt != nil && mt.place == "lease":
			want = durable.AddInFlight
		default:
			m.tasks[key] = &mtask{place: "due", at: exactly(at), originalDue: at, payload: payload,
				typ: pol.Type, ownMax: pol.MaxAttempts}
		}
		require.Equal(t, want, got[0].Status, "step %d: add %q (replace %v)", step, key, replace)
	case op < 9: // Claim
		limit := 1 + m.r.IntN(4)
		p := hourLease
		p.Limit, p.MaxAttempts, p.HistoryLen, p.Retention = limit, modelMaxAttempts, modelHistoryLen, m.retention
		var c claimed
		var err error
		m.around(func() { c, err = m.s.claim(ctx, p) })
		require.NoError(t, err)
		require.Equal(t, m.paused, c.Paused)
		var due []string
		for k, mt := range m.tasks {
			if mt.place == "due" && !mt.at.lo.After(c.Now) && !m.paused {
				due = append(due, k)
			}
		}
		slices.SortFunc(due, func(a, b string) int {
			if d := m.tasks[a].at.lo.Compare(m.tasks[b].at.lo); d != 0 {
				return d
			}
			return strings.Compare(a, b)
		})
		if len(due) > limit {
			due = due[:limit]
		}
		var got []string
		for _, ct := range c.Tasks {
			got = append(got, ct.Key)
			mt := m.tasks[ct.Key]
			require.NotNil(t, mt, "step %d: claimed unknown %q", step, ct.Key)
			require.Equal(t, mt.at.lo, ct.Due, "step %d: %q", step, ct.Key)
			require.Equal(t, mt.payload, string(ct.Payload))
			require.Equal(t, mt.attempts+1, ct.Attempt)
			require.Equal(t, mt.typ, ct.Policy.Type)
			require.NotContains(t, m.oldTokens, ct.Token, "step %d: token reused", step)
			if mt.token != 0 {
				m.oldTokens = append(m.oldTokens, mt.token)
			}
			mt.place, mt.at, mt.token = "lease", m.clockAfter(modelLease), ct.Token
			mt.attempts++
			mt.deliveryAttempt = mt.attempts
		}
		slices.Sort(got)
		slices.Sort(due)
		require.Equal(t, due, got, "step %d: claimed", step)
	case op < 10: // Extend, with the current token or a stale one
		key, mt := m.leased()
		if mt == nil {
			return
		}
		tok, stale := m.pickToken(mt)
		var codes []durable.ExtendCode
		var err error
		m.around(func() { codes, err = m.s.extend(ctx, modelLease, []held{{key, tok}}) })
		require.NoError(t, err)
		want := durable.ExtendLost
		if !stale {
			want = durable.ExtendOK
			if mt.cancelReq {
				want = durable.ExtendCancelled
			}
			mt.at = m.clockAfter(modelLease)
		}
		require.Equal(t, []durable.ExtendCode{want}, codes, "step %d: extend %q", step, key)
	case op < 15: // Settle one or two deliveries
		var ss []settlement
		for i := 0; i < 1+m.r.IntN(2); i++ {
			key, mt := m.leased()
			if mt == nil {
				break
			}
			tok, _ := m.pickToken(mt)
			outcomes := []durable.OutcomeKind{durable.OutcomeDone, durable.OutcomeRetry, durable.OutcomeDead, durable.OutcomeRelease, durable.OutcomeLater}
			ss = append(ss, settlement{Key: key, Token: tok, Outcome: outcomes[m.r.IntN(len(outcomes))],
				Delay: m.anyDelay(), Error: fmt.Sprintf("err %d.%d", step, i)})
		}
		if len(ss) == 0 {
			return
		}
		p := settleParams{DeadCap: 1000, HistoryLen: modelHistoryLen, Retention: m.retention, MaxRetained: 1000}
		var got settled
		var err error
		m.around(func() { got, err = m.s.settle(ctx, p, ss) })
		require.NoError(t, err)
		want := make([]durable.SettleCode, len(ss))
		for i, st := range ss {
			want[i] = m.settle(st)
		}
		require.Equal(t, want, got.Codes, "step %d: settle %+v", step, ss)
	case op < 17: // Cancel
		key := m.key()
		var code cancelCode
		var err error
		m.around(func() { code, _, err = m.s.cancel(ctx, key, m.retention, 1000) })
		require.NoError(t, err)
		want := cancelUnknown
		if mt := m.tasks[key]; mt != nil {
			switch mt.place {
			case "due":
				want = cancelScheduled
				m.retire(key, "cancelled")
			case "dead":
				want = cancelDead
				m.retire(key, "cancelled")
			case "lease":
				want = cancelInFlight
				mt.cancelReq = true
			case "kept":
				want = cancelForgotten
				delete(m.tasks, key)
			}
		}
		require.Equal(t, want, code, "step %d: cancel %q", step, key)
	case op < 18: // Reschedule
		key, at := m.key(), m.anyTime()
		code, err := m.s.reschedule(ctx, key, at)
		require.NoError(t, err)
		want := durable.RescheduleMissing
		if mt := m.tasks[key]; mt != nil && mt.place == "due" {
			want = durable.RescheduleMoved
			mt.at = exactly(at) // the original due time stays Add's or Replace's
		} else if mt != nil && mt.place == "lease" {
			want = durable.RescheduleInFlight
		}
		require.Equal(t, want, code, "step %d: reschedule %q", step, key)
	case op < 19: // Requeue
		key := m.key()
		var ok bool
		var err error
		m.around(func() { ok, _, err = m.s.requeue(ctx, key) })
		require.NoError(t, err)
		mt := m.tasks[key]
		wasDead := mt != nil && mt.place == "dead"
		require.Equal(t, wasDead, ok, "step %d: requeue %q", step, key)
		if wasDead {
			mt.place, mt.at, mt.attempts, mt.postponements = "due", m.clockAfter(0), 0, 0
		}
	default: // Pause or Resume
		if m.paused {
			require.NoError(t, m.s.resume(ctx))
		} else {
			require.NoError(t, m.s.pause(ctx))
		}
		m.paused = !m.paused
	}
}

// pickToken returns the task's current token, or (a third of the time) a
// stale one: an earlier delivery's, or one never given.
func (m *model) pickToken(mt *mtask) (int64, bool) {
	if m.r.IntN(3) != 0 {
		return mt.token, false
	}
	if len(m.oldTokens) > 0 && m.r.IntN(2) == 0 {
		return m.oldTokens[m.r.IntN(len(m.oldTokens))], true
	}
	return mt.token + 1_000_000, true
}

// settle applies one settlement to the model as lua/settle.lua would.
func (m *model) settle(st settlement) durable.SettleCode {
	mt := m.tasks[st.Key]
	if mt == nil || mt.place != "lease" || mt.token != st.Token {
		return durable.SettleRejected
	}
	outcome := string(st.Outcome)
	if mt.cancelReq {
		outcome = "cancelled"
	}
	code := durable.SettleRejected
	finished := outcome == "done" || outcome == "cancelled"
	if m.retention > 0 || !finished {
		mt.history = append(mt.history, fmt.Sprintf("%d %s %s", mt.deliveryAttempt, outcome, st.Error))
		if len(mt.history) > modelHistoryLen {
			mt.history = mt.history[len(mt.history)-modelHistoryLen:]
		}
	}
	m.oldTokens = append(m.oldTokens, mt.token)
	switch outcome {
	case "done", "cancelled":
		m.retire(st.Key, outcome)
		code = durable.SettleDone
		if outcome == "cancelled" {
			code = durable.SettleCancelled
		}
	case "release":
		mt.attempts--
		m.requeueAt(mt, 0)
		code = durable.SettleReleased
	case "dead":
		mt.place, mt.at, mt.lastErr, mt.token = "dead", m.clockAfter(0), st.Error, 0
		code = durable.SettleDead
	case "retry":
		m.requeueAt(mt, st.Delay)
		mt.lastErr, mt.postponements = st.Error, 0
		code = durable.SettleRetry
	case "later":
		mt.postponements++
		mt.attempts--
		m.requeueAt(mt, st.Delay)
		mt.lastErr = st.Error
		code = durable.SettlePostponed
	}
	return code
}

func (m *model) requeueAt(mt *mtask, d time.Duration) {
	mt.place, mt.at, mt.token = "due", m.clockAfter(d), 0
}

func (m *model) retire(key, state string) {
	if m.retention <= 0 {
		delete(m.tasks, key)
		return
	}
	mt := m.tasks[key]
	mt.place, mt.result, mt.finished, mt.at = "kept", state, m.clockAfter(0), m.clockAfter(m.retention)
	mt.token, mt.cancelReq, mt.postponements = 0, false, 0
	if state == "done" {
		mt.lastErr = "" // it succeeded; the log keeps each attempt's error
	}
}

// compareGets checks every key's Get against the model, and adopts the
// times the database chose within the model's intervals.
func (m *model) compareGets() {
	t := m.t
	for _, key := range m.keys {
		info, err := m.s.get(testCtx(t), key)
		mt := m.tasks[key]
		if mt == nil {
			require.ErrorIs(t, err, durable.ErrNotFound, "%q should not exist", key)
			continue
		}
		require.NoError(t, err, key)
		require.Equal(t, mt.state(), info.State, key)
		require.Equal(t, mt.attempts, info.Attempts, "%q attempts", key)
		require.Equal(t, mt.lastErr, info.LastError, "%q last error", key)
		require.Equal(t, mt.typ, info.Type, key)
		require.Equal(t, mt.ownMax, info.MaxAttempts, key)
		require.Equal(t, mt.postponements, info.Postponements, "%q postponements", key)
		require.Equal(t, len(mt.payload), info.PayloadSize, key)
		require.Equal(t, mt.originalDue, info.OriginalDue, "%q original due", key)
		var hist []string
		for _, d := range info.History {
			hist = append(hist, fmt.Sprintf("%d %s %s", d.Attempt, d.Outcome, d.Error))
		}
		require.Equal(t, mt.history, hist, "%q history", key)
		switch mt.place {
		case "due", "lease":
			mt.at = adopt(t, key, mt.at, info.Due)
		case "dead":
			mt.at = adopt(t, key, mt.at, info.Finished)
		case "kept":
			mt.finished = adopt(t, key, mt.finished, info.Finished)
		}
	}
}

func adopt(t *testing.T, key string, want interval, got time.Time) interval {
	t.Helper()
	require.False(t, got.Before(want.lo) || got.After(want.hi), "%q: time %v outside [%v, %v]", key, got, want.lo, want.hi)
	return exactly(got)
}

// compareLists pages through every state two tasks at a time.
func (m *model) compareLists() {
	t := m.t
	for _, st := range []durable.State{durable.StateScheduled, durable.StateRetrying, durable.StateInFlight, durable.StateDead, durable.StateDone, durable.StateCancelled} {
		var want []string
		for k, mt := range m.tasks {
			if mt.state() == st {
				want = append(want, k)
			}
		}
		ordered := st != durable.StateDone && st != durable.StateCancelled // the model does not know when retention ends
		if ordered {
			slices.SortFunc(want, func(a, b string) int {
				if d := m.tasks[a].at.lo.Compare(m.tasks[b].at.lo); d != 0 {
					return d
				}
				return strings.Compare(a, b)
			})
		} else {
			slices.Sort(want)
		}
		var got []string
		var cursor *durable.ListPos
		for pages := 0; ; pages++ {
			require.Less(t, pages, 100, "list %s does not end", st)
			tasks, next, err := m.s.List(testCtx(t), st, cursor, 2)
			require.NoError(t, err)
			for _, i := range tasks {
				require.Equal(t, st, i.State)
				got = append(got, i.Key)
			}
			if next == nil {
				break
			}
			cursor = next
		}
		if !ordered {
			slices.Sort(got)
		}
		require.Equal(t, want, got, "list %s", st)
	}
}

func (m *model) compareStats() {
	sts, err := m.s.Stats(testCtx(m.t))
	require.NoError(m.t, err)
	require.Len(m.t, sts, 1, "one partition")
	st := sts[0]
	now := dbClock(m.t) // every due time is an hour away from it
	var want durable.ShardStats
	for _, mt := range m.tasks {
		switch mt.place {
		case "due":
			if mt.at.lo.After(now) {
				want.Scheduled++
			} else {
				want.Due++
			}
		case "lease":
			want.InFlight++
		case "dead":
			want.Dead++
		case "kept":
			want.Retained++
		}
	}
	require.Equal(m.t, []any{want.Due, want.Scheduled, want.InFlight, want.Dead, want.Retained, m.paused},
		[]any{st.Due, st.Scheduled, st.InFlight, st.Dead, st.Retained, st.Paused})
}
