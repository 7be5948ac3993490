package sqlitewheel

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/require"
)

// limits are a Queue's defaults, as the operations below receive them.
var limits = durable.Limits{
	MaxAttempts: 3, MaxDead: 10000, MaxRetained: 10000, HistoryLen: 10, WorkerID: "w",
	ReapBatch: 100, MaxUnconfirmed: 3,
}

func add(t *testing.T, st *Store, keys ...string) {
	t.Helper()
	var reqs []*durable.AddRequest
	for _, k := range keys {
		reqs = append(reqs, &durable.AddRequest{Key: k, Payload: []byte("p-" + k), Relative: true})
	}
	st.Add(context.Background(), reqs)
	for _, r := range reqs {
		require.NoError(t, r.Err)
		require.Equal(t, durable.AddStored, r.Status, r.Key)
	}
}

// claimAll claims every due task (they are due at once) and returns them by key.
func claimAll(t *testing.T, st *Store, lease time.Duration, lim durable.Limits) map[string]durable.ClaimedTask {
	t.Helper()
	c, err := st.Claim(context.Background(), 0, 1000, lease, lim)
	require.NoError(t, err)
	out := map[string]durable.ClaimedTask{}
	for _, ct := range c.Tasks {
		out[ct.Key] = ct
	}
	return out
}

func settle(t *testing.T, st *Store, lim durable.Limits, os ...durable.Outcome) durable.Settled {
	t.Helper()
	s, err := st.Settle(context.Background(), 0, lim, os)
	require.NoError(t, err)
	return s
}

func get(t *testing.T, st *Store, key string) *durable.TaskInfo {
	t.Helper()
	info, err := st.Get(context.Background(), key)
	require.NoError(t, err)
	return info
}

// Each settle outcome moves the task as lua/settle.lua does, with the codes,
// attempts, last error and history it says; a stale or malformed token
// changes nothing.
func TestSettleOutcomes(t *testing.T) {
	st, _ := openTemp(t, Options{})
	defer checkCounts(t, st)
	add(t, st, "done", "retry", "dead", "release", "later", "stale")
	c := claimAll(t, st, time.Hour, limits)
	require.Len(t, c, 6)
	tok := func(k string) string { return c[k].Token }
	s := settle(t, st, limits,
		durable.Outcome{Key: "done", Token: tok("done"), Kind: durable.OutcomeDone},
		durable.Outcome{Key: "retry", Token: tok("retry"), Kind: durable.OutcomeRetry, Delay: 3_600_000, Err: "boom"},
		durable.Outcome{Key: "dead", Token: tok("dead"), Kind: durable.OutcomeDead, Err: "bad"},
		durable.Outcome{Key: "release", Token: tok("release"), Kind: durable.OutcomeRelease},
		durable.Outcome{Key: "later", Token: tok("later"), Kind: durable.OutcomeLater, Delay: 60_000, Err: "not now"},
		durable.Outcome{Key: "stale", Token: tok("stale") + "0", Kind: durable.OutcomeDone},
		durable.Outcome{Key: "stale", Token: "not a token", Kind: durable.OutcomeDone},
	)
	require.Equal(t, []durable.SettleCode{durable.SettleDone, durable.SettleRetry, durable.SettleDead,
		durable.SettleReleased, durable.SettlePostponed, durable.SettleRejected, durable.SettleRejected}, s.Codes)
	require.Nil(t, get(t, st, "done"), "done without retention is forgotten")

	r := get(t, st, "retry")
	require.Equal(t, durable.StateRetrying, r.State)
	require.Equal(t, 1, r.Attempts)
	require.Equal(t, "boom", r.LastError)
	require.GreaterOrEqual(t, time.Until(r.Due), 59*time.Minute)
	require.Len(t, r.History, 1)
	require.Equal(t, durable.Delivery{Attempt: 1, Worker: "w", Start: r.History[0].Start, End: r.History[0].End,
		Outcome: "retry", Error: "boom"}, r.History[0])

	d := get(t, st, "dead")
	require.Equal(t, durable.StateDead, d.State)
	require.Equal(t, "bad", d.LastError)

	rel := get(t, st, "release")
	require.Equal(t, durable.StateScheduled, rel.State, "release gives the attempt back")
	require.Equal(t, 0, rel.Attempts)

	l := get(t, st, "later")
	require.Equal(t, durable.StateRetrying, l.State)
	require.Equal(t, 0, l.Attempts, "a postponement counts no attempt")
	require.Equal(t, "not now", l.LastError)

	require.Equal(t, durable.StateInFlight, get(t, st, "stale").State, "a stale token changed the task")
	require.Equal(t, rel.Due.UnixMilli(), s.Next, "Settled.Next is the earliest due time")
}

// Settle records each outcome as its Kind says, whatever the task's
// attempts (its own MaxAttempts is 1 here) and postponements: the Queue
// decides. A later counts a postponement and gives its attempt back, a
// retry starts the postponements over.
func TestSettleRecordsAsTold(t *testing.T) {
	st, _ := openTemp(t, Options{})
	defer checkCounts(t, st)
	ctx := context.Background()
	reqs := []*durable.AddRequest{{Key: "k", Relative: true, Policy: durable.Policy{MaxAttempts: 1}}}
	st.Add(ctx, reqs)
	require.NoError(t, reqs[0].Err)
	var codes []durable.SettleCode
	var postponements []int
	for _, kind := range []durable.OutcomeKind{durable.OutcomeLater, durable.OutcomeLater, durable.OutcomeLater,
		durable.OutcomeRetry, durable.OutcomeLater, durable.OutcomeRetry, durable.OutcomeDead} {
		ct, ok := claimAll(t, st, time.Hour, limits)["k"]
		require.True(t, ok, "k not due after %v", codes)
		postponements = append(postponements, ct.Postponements)
		s := settle(t, st, limits, durable.Outcome{Key: "k", Token: ct.Token, Kind: kind, Err: "wait"})
		codes = append(codes, s.Codes[0])
	}
	require.Equal(t, []durable.SettleCode{durable.SettlePostponed, durable.SettlePostponed, durable.SettlePostponed,
		durable.SettleRetry, durable.SettlePostponed, durable.SettleRetry, durable.SettleDead}, codes)
	require.Equal(t, []int{0, 1, 2, 3, 0, 1, 0}, postponements, "claimed after each")
	info := get(t, st, "k")
	require.Equal(t, durable.StateDead, info.State)
	require.Equal(t, 3, info.Attempts, "three counted: two retries and the death")
	var outcomes []string
	for _, h := range info.History {
		outcomes = append(outcomes, h.Outcome)
	}
	require.Equal(t, []string{"later", "later", "later", "retry", "later", "retry", "dead"}, outcomes)

	ok, due, err := st.Requeue(ctx, "k")
	require.NoError(t, err)
	require.True(t, ok)
	info = get(t, st, "k")
	require.Equal(t, durable.StateRetrying, info.State, "a requeued task keeps its last error")
	require.Equal(t, 0, info.Attempts)
	require.Equal(t, due, info.Due.UnixMilli())
	ok, _, err = st.Requeue(ctx, "k")
	require.NoError(t, err)
	require.False(t, ok, "Requeue of a task not dead")
}

// Expired leases are reaped by the next claim: an unconfirmed claim gives
// its attempt back (a lost reply, maybe), up to MaxUnconfirmed in a row; a
// confirmed one counts; a task out of attempts dies; one cancelled in
// flight finishes as cancelled. Tokens are new at every claim.
func TestReapExpiredLeases(t *testing.T) {
	st, _ := openTemp(t, Options{})
	defer checkCounts(t, st)
	ctx := context.Background()
	add(t, st, "unconfirmed", "confirmed", "cancelled")
	lease := time.Millisecond
	seen := map[string]bool{}
	var attempts []int
	for round := range 4 {
		c := claimAll(t, st, lease, limits)
		for _, ct := range c {
			require.False(t, seen[ct.Token], "token %s handed out twice", ct.Token)
			seen[ct.Token] = true
		}
		if ct, ok := c["confirmed"]; ok {
			codes, err := st.Extend(ctx, 0, lease, []durable.Lease{{Key: "confirmed", Token: ct.Token}})
			require.NoError(t, err)
			require.Equal(t, []durable.ExtendCode{durable.ExtendOK}, codes)
		}
		if round == 0 {
			_, err := st.Cancel(ctx, "cancelled", 0, 100)
			require.NoError(t, err)
			codes, err := st.Extend(ctx, 0, lease, []durable.Lease{{Key: "cancelled", Token: c["cancelled"].Token}})
			require.NoError(t, err)
			require.Equal(t, []durable.ExtendCode{durable.ExtendCancelled}, codes)
		}
		if ct, ok := c["unconfirmed"]; ok {
			attempts = append(attempts, ct.Attempt)
		}
		time.Sleep(5 * time.Millisecond) // past every lease of the round
	}
	// Claims 1-3 of "unconfirmed" expire unconfirmed: attempt 1 each time.
	require.Equal(t, []int{1, 1, 1, 1}, attempts)
	require.Nil(t, get(t, st, "cancelled"), "a task cancelled in flight is finished when its lease runs out")
	conf := get(t, st, "confirmed")
	require.Equal(t, durable.StateDead, conf.State, "confirmed three times, out of attempts: %+v", conf)
	require.Equal(t, 3, conf.Attempts)
	require.Equal(t, "lease expired", conf.LastError)
	require.Equal(t, "lease expired", conf.History[len(conf.History)-1].Outcome)
}

// Finished tasks are retained for the retention, readable as done or
// cancelled, and a retained key refuses Add; the oldest beyond MaxRetained
// and those whose retention ended are forgotten, and dead tasks beyond
// MaxDead, oldest first.
func TestRetentionAndCaps(t *testing.T) {
	st, _ := openTemp(t, Options{})
	defer checkCounts(t, st)
	ctx := context.Background()
	lim := limits
	lim.Retention, lim.MaxRetained, lim.MaxDead = time.Hour, 3, 2
	var keys []string
	for i := range 6 {
		keys = append(keys, "k"+strconv.Itoa(i))
	}
	add(t, st, keys...)
	c := claimAll(t, st, time.Hour, lim)
	for _, k := range keys[:5] {
		s := settle(t, st, lim, durable.Outcome{Key: k, Token: c[k].Token, Kind: durable.OutcomeDone})
		require.Equal(t, durable.SettleDone, s.Codes[0])
	}
	st0, err := st.Stats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 3, st0[0].Retained, "MaxRetained")
	require.Nil(t, get(t, st, "k0"), "the oldest retained is forgotten first")
	info := get(t, st, "k4")
	require.Equal(t, durable.StateDone, info.State)
	require.Len(t, info.History, 1, "a retained task keeps its history")
	dup := []*durable.AddRequest{{Key: "k4", Relative: true}}
	st.Add(ctx, dup)
	require.Equal(t, durable.AddExists, dup[0].Status, "a retained key refuses Add")
	res, err := st.Cancel(ctx, "k4", lim.Retention, lim.MaxRetained)
	require.NoError(t, err)
	require.True(t, res.Found)
	require.Nil(t, get(t, st, "k4"), "Cancel of a retained task forgets it")

	add(t, st, "c")
	_, err = st.Cancel(ctx, "c", lim.Retention, lim.MaxRetained)
	require.NoError(t, err)
	require.Equal(t, durable.StateCancelled, get(t, st, "c").State)

	// Retention over: a later settle forgets it.
	lim.Retention = time.Millisecond
	add(t, st, "d0", "d1", "d2", "d3")
	k5 := c["k5"].Token
	c = claimAll(t, st, time.Hour, lim)
	s := settle(t, st, lim, durable.Outcome{Key: "k5", Token: k5, Kind: durable.OutcomeDone})
	require.Equal(t, durable.SettleDone, s.Codes[0])
	time.Sleep(5 * time.Millisecond)
	for _, k := range []string{"d0", "d1", "d2", "d3"} {
		s = settle(t, st, lim, durable.Outcome{Key: k, Token: c[k].Token, Kind: durable.OutcomeDead, Err: k})
		require.Equal(t, durable.SettleDead, s.Codes[0])
	}
	st0, err = st.Stats(ctx)
	require.NoError(t, err)
	require.Nil(t, get(t, st, "k5"), "retention over: the next settle forgets it")
	require.EqualValues(t, 3, st0[0].Retained, "the others' retention lasts: %+v", st0[0])
	require.EqualValues(t, 2, st0[0].Dead, "MaxDead")
	dead, err := st.Dead(ctx, 10)
	require.NoError(t, err)
	require.Len(t, dead, 2)
	require.Equal(t, "d2", dead[0].Key, "the oldest dead are dropped first")
	require.Equal(t, []byte("p-d2"), dead[0].Payload)
}

// List pages of a state that shares its place with another end early with
// a cursor when a page examined listScan rows, and still list every task
// once; Stats tells due now from due later.
func TestListRareStateAndStats(t *testing.T) {
	st, _ := openTemp(t, Options{})
	defer checkCounts(t, st)
	ctx := context.Background()
	var reqs []*durable.AddRequest
	at := time.Now().Add(-time.Minute).UnixMilli()
	for i := range 600 {
		reqs = append(reqs, &durable.AddRequest{Key: fmt.Sprintf("k%03d", i), At: at + int64(i)})
	}
	reqs = append(reqs, &durable.AddRequest{Key: "later", At: time.Now().Add(time.Hour).UnixMilli()})
	st.Add(ctx, reqs)
	// Every 100th task becomes retrying.
	c := claimAll(t, st, time.Hour, limits)
	var os []durable.Outcome
	for i := 0; i < 600; i++ {
		k := fmt.Sprintf("k%03d", i)
		kind := durable.OutcomeRelease
		if i%100 == 0 {
			kind = durable.OutcomeRetry
		}
		os = append(os, durable.Outcome{Key: k, Token: c[k].Token, Kind: kind, Delay: 0, Err: "e"})
	}
	settle(t, st, limits, os...)
	st.Add(ctx, []*durable.AddRequest{{Key: "old", At: time.Now().Add(-time.Minute).UnixMilli()}})
	var got []string
	var after *durable.ListPos
	pages := 0
	for {
		tasks, next, err := st.List(ctx, durable.StateRetrying, after, 4)
		require.NoError(t, err)
		for _, ti := range tasks {
			require.Equal(t, durable.StateRetrying, ti.State)
			got = append(got, ti.Key)
		}
		pages++
		require.Less(t, pages, 100, "List never ended")
		if next == nil {
			break
		}
		after = next
	}
	require.Len(t, got, 6)
	require.Greater(t, pages, 2, "a page examines at most listScan rows")

	s, err := st.Stats(ctx)
	require.NoError(t, err)
	require.EqualValues(t, 601, s[0].Due)
	require.EqualValues(t, 1, s[0].Scheduled)
	require.GreaterOrEqual(t, s[0].OldestDue, 59*time.Second)
}

// Pause stops claims, not reaps; Resume lets them lease again.
func TestPause(t *testing.T) {
	st, _ := openTemp(t, Options{})
	ctx := context.Background()
	add(t, st, "k")
	require.NoError(t, st.Pause(ctx, true))
	c, err := st.Claim(ctx, 0, 10, time.Hour, limits)
	require.NoError(t, err)
	require.True(t, c.Paused)
	require.Empty(t, c.Tasks)
	require.EqualValues(t, -1, c.Next, "a paused namespace waits for nothing")
	s, err := st.Stats(ctx)
	require.NoError(t, err)
	require.True(t, s[0].Paused)
	require.NoError(t, st.Pause(ctx, false))
	require.Len(t, claimAll(t, st, time.Hour, limits), 1)
}

// The periodic registry as lua/periodic.lua: register once, advance by
// compare-and-set and never backwards, remove.
func TestPeriodicRegistry(t *testing.T) {
	st, _ := openTemp(t, Options{})
	ctx := context.Background()
	p := func(op durable.PeriodicOp, from, to int64) durable.PeriodicState {
		t.Helper()
		s, err := st.Periodic(ctx, op, "s", from, to)
		require.NoError(t, err)
		return s
	}
	r := p(durable.PeriodicRead, 0, 0)
	require.EqualValues(t, -1, r.Status)
	r = p(durable.PeriodicRegister, 0, 0)
	require.EqualValues(t, 1, r.Status)
	require.Equal(t, r.Now, r.Pointer)
	ptr := r.Pointer
	require.EqualValues(t, 0, p(durable.PeriodicRegister, 0, 0).Status)
	require.EqualValues(t, 1, p(durable.PeriodicAdvance, ptr, ptr+10).Status)
	lost := p(durable.PeriodicAdvance, ptr, ptr+20)
	require.EqualValues(t, 0, lost.Status, "an advance from a stale pointer")
	require.Equal(t, ptr+10, lost.Pointer)
	_, err := st.Periodic(ctx, durable.PeriodicAdvance, "s", ptr+10, ptr+10)
	require.Error(t, err, "an advance that is not forward")
	require.Equal(t, ptr+10, p(durable.PeriodicRemove, 0, 0).Pointer)
	require.EqualValues(t, -1, p(durable.PeriodicRead, 0, 0).Status)
}

// The store's keys are bytes: a NUL, invalid UTF-8 and the longest key
// round-trip, and List orders keys bytewise. (The Queue lets through only
// UTF-8 without NUL, on every store: durable's checkKey.)
func TestKeysAreBytes(t *testing.T) {
	st, _ := openTemp(t, Options{})
	ctx := context.Background()
	long := string(make([]byte, durable.MaxKeyLen))
	keys := []string{"a\x00b", "\xff\xfe", "a", "é", long}
	at := time.Now().Add(time.Hour).UnixMilli()
	var reqs []*durable.AddRequest
	for _, k := range keys {
		reqs = append(reqs, &durable.AddRequest{Key: k, At: at})
	}
	st.Add(ctx, reqs)
	for _, r := range reqs {
		require.NoError(t, r.Err)
		require.Equal(t, durable.AddStored, r.Status)
		require.NotNil(t, get(t, st, r.Key), "%q", r.Key)
	}
	tasks, _, err := st.List(ctx, durable.StateScheduled, nil, 10)
	require.NoError(t, err)
	var got []string
	for _, ti := range tasks {
		got = append(got, ti.Key)
	}
	require.Equal(t, []string{long, "a", "a\x00b", "é", "\xff\xfe"}, got)
}

// Fencing tokens come from a committed counter: a store opened again on
// the file never hands out a token it handed out before.
func TestTokensSurviveReopen(t *testing.T) {
	st, path := openTemp(t, Options{})
	add(t, st, "k")
	first := claimAll(t, st, time.Millisecond, limits)["k"].Token
	require.NoError(t, st.Close())
	time.Sleep(5 * time.Millisecond)
	st = openAt(t, path, Options{})
	second := claimAll(t, st, time.Hour, limits)["k"].Token
	a, _ := strconv.Atoi(first)
	b, _ := strconv.Atoi(second)
	require.Greater(t, b, a)
}

// Namespaces of one file are apart: tasks, counts, pauses.
func TestNamespaces(t *testing.T) {
	a, path := openTemp(t, Options{Namespace: "a"})
	b := openAt(t, path, Options{Namespace: "b"})
	add(t, a, "k")
	require.Nil(t, get(t, b, "k"))
	require.NoError(t, b.Pause(context.Background(), true))
	require.Len(t, claimAll(t, a, time.Hour, limits), 1)
	checkCounts(t, a)
	checkCounts(t, b)
}
