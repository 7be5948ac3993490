package pgwheel

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/stretchr/testify/require"
)

// TestAddBatchEdges: one Store.Add longer than maxAddRows (so several
// statements), with bad keys among good ones and a Replace: a bad key fails
// alone with durable.ErrKey, every good key is stored with its own due time
// and payload. (A key comes once per call: durable folds repeats.)
func TestAddBatchEdges(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	base := int64(1_000_000)
	n := 2*maxAddRows + 3
	var reqs []*durable.AddRequest
	for i := range n {
		reqs = append(reqs, &durable.AddRequest{Key: fmt.Sprintf("k%04d", i), At: base + int64(i), Payload: []byte{byte(i)}})
	}
	bad := []*durable.AddRequest{{Key: "a\x00b"}, {Key: ""}, {Key: "\xff"}}
	replace := &durable.AddRequest{Key: "r", Replace: true, Relative: true, At: 60_000}
	all := append([]*durable.AddRequest{}, reqs[:10]...)
	all = append(all, bad[0], replace)
	all = append(all, reqs[10:maxAddRows+5]...)
	all = append(all, bad[1])
	all = append(all, reqs[maxAddRows+5:]...)
	all = append(all, bad[2])
	require.Greater(t, len(all)-len(bad), 2*maxAddRows, "the batch must need three statements")

	earliest := s.Add(ctx, all)
	require.Equal(t, base, earliest)
	for _, r := range append(reqs, replace) {
		require.NoError(t, r.Err, r.Key)
		require.Equal(t, durable.AddStored, r.Status, r.Key)
	}
	for _, r := range bad {
		require.ErrorIs(t, r.Err, durable.ErrKey, "%q", r.Key)
	}
	for i, r := range reqs {
		info, err := s.Get(ctx, r.Key)
		require.NoError(t, err)
		require.NotNil(t, info, r.Key)
		require.Equal(t, time.UnixMilli(base+int64(i)).UTC(), info.Due.UTC(), "%q: not its request's due time", r.Key)
		require.Equal(t, 1, info.PayloadSize, r.Key)
	}
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, n+1, st[0].Due+st[0].Scheduled, "stored tasks")

	// Added again, every key exists: nothing is stored, earliest is -1.
	for _, r := range reqs {
		r.Status = durable.AddStored
	}
	require.EqualValues(t, -1, s.Add(ctx, reqs))
	for _, r := range reqs {
		require.Equal(t, durable.AddExists, r.Status, r.Key)
	}
}

// TestAddBatchWakesOnce: a batch sends one wake-up, for its earliest task,
// and only when no scheduled task is due at or before it.
func TestAddBatchWakesOnce(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	l, err := s.Listen(ctx)
	require.NoError(t, err)
	defer l.Close()

	at := func(ms int64) NewTask { return NewTask{Key: fmt.Sprint(ms), At: time.UnixMilli(ms)} }
	a, err := s.add(ctx, at(5000), at(4000), at(6000))
	require.NoError(t, err)
	require.Equal(t, []bool{false, true, false}, []bool{a[0].Notified, a[1].Notified, a[2].Notified})
	wctx, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	due, err := l.Wait(wctx)
	require.NoError(t, err, "no wake-up within %v", patience)
	require.Equal(t, time.UnixMilli(4000).UTC(), due)

	// All later than 4000: no wake-up.
	a, err = s.add(ctx, at(4500), at(7000))
	require.NoError(t, err)
	require.False(t, a[0].Notified || a[1].Notified)
	a, err = s.add(ctx, at(3000), at(3500))
	require.NoError(t, err)
	require.True(t, a[0].Notified)
	require.False(t, a[1].Notified)
	due, err = l.Wait(wctx)
	require.NoError(t, err, "no wake-up within %v", patience)
	require.Equal(t, time.UnixMilli(3000).UTC(), due, "a wake-up came for a batch that had no earliest task")
}

// TestSettleBatch: one Settle with a delivery named twice (the first
// outcome wins, the second is stale), a done outcome forgotten beside a
// retry and a release, and a stale token: each gets its own code, and Next
// is the earliest due time the call gave a task. Then a done-only settle
// (settleForget, no transaction).
func TestSettleBatch(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	keys := []string{"a", "b", "c", "d"}
	var tasks []NewTask
	for _, k := range keys {
		tasks = append(tasks, NewTask{Key: k})
	}
	_, err := s.add(ctx, tasks...)
	require.NoError(t, err)
	tok := map[string]int64{}
	for len(tok) < len(keys) {
		c, err := s.claim(ctx, hourLease)
		require.NoError(t, err)
		for _, ct := range c.Tasks {
			tok[ct.Key] = ct.Token
		}
	}
	lim := settleParams{HistoryLen: 10, DeadCap: 100}
	st, err := s.settle(ctx, lim, []settlement{
		{Key: "a", Token: tok["a"], Outcome: durable.OutcomeDone},
		{Key: "b", Token: tok["b"], Outcome: durable.OutcomeRetry, Delay: time.Hour},
		{Key: "a", Token: tok["a"], Outcome: durable.OutcomeRetry},       // named twice
		{Key: "c", Token: tok["c"] + 1000, Outcome: durable.OutcomeDone}, // stale
		{Key: "d", Token: tok["d"], Outcome: durable.OutcomeRelease},
		{Key: "b", Token: tok["b"], Outcome: durable.OutcomeDone}, // named twice
	})
	require.NoError(t, err)
	require.Equal(t, []durable.SettleCode{durable.SettleDone, durable.SettleRetry, durable.SettleRejected,
		durable.SettleRejected, durable.SettleReleased, durable.SettleRejected}, st.Codes)
	info, err := s.Get(ctx, "a")
	require.NoError(t, err)
	require.Nil(t, info, "a done task without retention is forgotten")
	info, err = s.Get(ctx, "d")
	require.NoError(t, err)
	require.Equal(t, info.Due.UnixMilli(), st.NextDue.UnixMilli(), "Next is not the released task's due time")
	info, err = s.Get(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, durable.StateRetrying, info.State)
	require.True(t, info.Due.After(st.NextDue))
	info, err = s.Get(ctx, "c")
	require.NoError(t, err)
	require.Equal(t, durable.StateInFlight, info.State, "a stale token settled a task")

	// Only done outcomes: nothing due again, no Next.
	c, err := s.claim(ctx, hourLease)
	require.NoError(t, err)
	require.Len(t, c.Tasks, 1)
	st, err = s.settle(ctx, lim, []settlement{
		{Key: "c", Token: tok["c"], Outcome: durable.OutcomeDone},
		{Key: "d", Token: c.Tasks[0].Token, Outcome: durable.OutcomeDone},
	})
	require.NoError(t, err)
	require.Equal(t, []durable.SettleCode{durable.SettleDone, durable.SettleDone}, st.Codes)
	require.True(t, st.NextDue.IsZero(), "Next %v for a settle that made nothing due", st.NextDue)
}

// TestClaimFullSkipsNext: a claim that leased its whole limit answers Next
// = Now (the worker claims again at once); one that leased less answers the
// earliest due time or lease end left ("later"'s due time, an hour after
// the add, a few ms before either lease's end).
func TestClaimFullSkipsNext(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	_, err := s.add(ctx, NewTask{Key: "a"}, NewTask{Key: "b"}, NewTask{Key: "later", After: time.Hour})
	require.NoError(t, err)
	p := hourLease
	p.Limit = 1
	c, err := s.claim(ctx, p)
	require.NoError(t, err)
	require.Len(t, c.Tasks, 1)
	require.Equal(t, c.Now.UnixMilli(), c.Next.UnixMilli(), "a full claim")
	p.Limit = 5
	c, err = s.claim(ctx, p)
	require.NoError(t, err)
	require.Len(t, c.Tasks, 1)
	want := int64(-1)
	for _, k := range []string{"a", "b", "later"} {
		info, err := s.Get(ctx, k)
		require.NoError(t, err)
		if ms := info.Due.UnixMilli(); want < 0 || ms < want {
			want = ms
		}
	}
	require.Equal(t, want, c.Next.UnixMilli(), "not the earliest due time or lease end")
}
