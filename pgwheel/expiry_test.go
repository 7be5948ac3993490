package pgwheel

import (
	"fmt"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/stretchr/testify/require"
)

// expire claims key with a 1 ms lease, optionally confirms the claim by
// an Extend (of 1 ms too), and waits until the lease has run out by the
// database clock.
func expire(t *testing.T, s *Store, p claimParams, key string, confirm bool) claimedTask {
	t.Helper()
	ctx := testCtx(t)
	p.Lease = time.Millisecond
	c, err := s.claim(ctx, p)
	require.NoError(t, err)
	require.Len(t, c.Tasks, 1, "claim of %q", key)
	ct := c.Tasks[0]
	if confirm {
		codes, err := s.extend(ctx, time.Millisecond, []held{{key, ct.Token}})
		require.NoError(t, err)
		require.NotEqual(t, durable.ExtendLost, codes[0])
	}
	info, err := s.get(ctx, key)
	require.NoError(t, err)
	waitDBClockPast(t, info.Due)
	return ct
}

// TestLeaseExpiry: the next claim reaps an expired lease: a confirmed
// delivery counts its attempt and goes back to due with "lease expired" (or
// dead when out of attempts); an unconfirmed one (maybe a lost claim reply)
// gives its attempt back, at most UnconfirmedBound times in a row; a task
// cancelled in flight finishes as cancelled. Each leaves a log entry.
func TestLeaseExpiry(t *testing.T) {
	p := hourLease
	p.MaxAttempts, p.UnconfirmedBound, p.Limit = 2, 2, 0 // Limit 0: reap only
	claim1 := p
	claim1.Limit = 1

	t.Run("confirmed", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		_, err := s.add(ctx, NewTask{Key: "k"})
		require.NoError(t, err)
		for attempt := 1; attempt <= 2; attempt++ {
			ct := expire(t, s, claim1, "k", true)
			require.Equal(t, attempt, ct.Attempt)
			_, err = s.claim(ctx, p)
			require.NoError(t, err)
			info, err := s.get(ctx, "k")
			require.NoError(t, err)
			require.Equal(t, "lease expired", info.LastError)
			require.Equal(t, attempt, info.Attempts)
			require.Len(t, info.History, attempt)
			require.Equal(t, "lease expired", info.History[attempt-1].Outcome)
			if attempt < 2 {
				require.Equal(t, durable.StateRetrying, info.State)
			} else {
				require.Equal(t, durable.StateDead, info.State, "out of attempts")
			}
		}
	})

	t.Run("unconfirmed", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		_, err := s.add(ctx, NewTask{Key: "k", Policy: durable.Policy{MaxAttempts: 1}})
		require.NoError(t, err)
		// A worker that dies before its first heartbeat every time: two
		// claims are given back (the bound), the third counts, and the task
		// dies with its one attempt.
		for claim := 1; claim <= 3; claim++ {
			ct := expire(t, s, claim1, "k", false)
			require.Equal(t, 1, ct.Attempt, "claim %d", claim)
			_, err = s.claim(ctx, p)
			require.NoError(t, err)
			info, err := s.get(ctx, "k")
			require.NoError(t, err)
			want := durable.StateRetrying
			if claim == 3 {
				want = durable.StateDead
			}
			require.Equal(t, want, info.State, "after claim %d", claim)
		}
	})

	t.Run("cancelled in flight", func(t *testing.T) {
		s := newStore(t)
		ctx := testCtx(t)
		_, err := s.add(ctx, NewTask{Key: "k"})
		require.NoError(t, err)
		pr := claim1
		pr.Retention = time.Hour
		c, err := s.claim(ctx, claimParams{Limit: 1, Lease: time.Millisecond, MaxAttempts: 2, HistoryLen: 5})
		require.NoError(t, err)
		require.Len(t, c.Tasks, 1)
		code, _, err := s.cancel(ctx, "k", time.Hour, 100)
		require.NoError(t, err)
		require.Equal(t, cancelInFlight, code)
		info, err := s.get(ctx, "k")
		require.NoError(t, err)
		waitDBClockPast(t, info.Due)
		pr.Limit = 0
		_, err = s.claim(ctx, pr)
		require.NoError(t, err)
		info, err = s.get(ctx, "k")
		require.NoError(t, err)
		require.Equal(t, durable.StateCancelled, info.State)
		require.Equal(t, "lease expired", info.History[0].Outcome)
		// Retained: Add of the key stays a no-op.
		a, err := s.add(ctx, NewTask{Key: "k"})
		require.NoError(t, err)
		require.Equal(t, durable.AddExists, a[0].Status)
	})
}

// TestTrims: the dead set is cut to DeadCap, oldest first, and retained
// tasks past MaxRetained or past their retention are forgotten.
func TestTrims(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	const n = 6
	for i := 0; i < n; i++ {
		_, err := s.add(ctx, NewTask{Key: fmt.Sprintf("d%d", i)})
		require.NoError(t, err)
		c, err := s.claim(ctx, claimParams{Limit: 1, Lease: time.Hour, MaxAttempts: 1})
		require.NoError(t, err)
		require.Len(t, c.Tasks, 1)
		st, err := s.settle(ctx, settleParams{DeadCap: 4, MaxAttempts: 1},
			[]settlement{{Key: c.Tasks[0].Key, Token: c.Tasks[0].Token, Outcome: durable.OutcomeDead, Error: "boom"}})
		require.NoError(t, err)
		require.Equal(t, []durable.SettleCode{durable.SettleDead}, st.Codes)
		want := 0
		if i+1 > 4 {
			want = 1 // one over the cap
		}
		require.Equal(t, want, st.DeadTrimmed, "after %d burials", i+1)
	}
	dead, _, err := s.List(ctx, durable.StateDead, nil, 100)
	require.NoError(t, err)
	var keys []string
	for _, d := range dead {
		keys = append(keys, d.Key)
		require.Equal(t, "boom", d.LastError)
	}
	require.Equal(t, []string{"d2", "d3", "d4", "d5"}, keys, "the oldest went")

	// Retention: with MaxRetained 2, a third finished task pushes the oldest out.
	for i := 0; i < 3; i++ {
		_, err := s.add(ctx, NewTask{Key: fmt.Sprintf("r%d", i)})
		require.NoError(t, err)
		c, err := s.claim(ctx, claimParams{Limit: 1, Lease: time.Hour, MaxAttempts: 1})
		require.NoError(t, err)
		require.Len(t, c.Tasks, 1)
		st, err := s.settle(ctx, settleParams{MaxAttempts: 1, Retention: time.Hour, MaxRetained: 2},
			[]settlement{{Key: c.Tasks[0].Key, Token: c.Tasks[0].Token, Outcome: durable.OutcomeDone}})
		require.NoError(t, err)
		require.Equal(t, []durable.SettleCode{durable.SettleDone}, st.Codes)
	}
	_, err = s.get(ctx, "r0")
	require.ErrorIs(t, err, durable.ErrNotFound, "r0 should have been trimmed past MaxRetained")
	for _, k := range []string{"r1", "r2"} {
		info, err := s.get(ctx, k)
		require.NoError(t, err)
		require.Equal(t, durable.StateDone, info.State)
	}
	// A short retention ends: the next settle or cancel forgets it.
	_, err = s.add(ctx, NewTask{Key: "short"})
	require.NoError(t, err)
	const short = 200 * time.Millisecond
	code, trimmedAtOnce, err := s.cancel(ctx, "short", short, 100)
	require.NoError(t, err)
	require.Equal(t, cancelScheduled, code)
	// On a stalled machine the retention may end within the cancel itself,
	// whose trim then forgets it (legitimately: its retention is over); the
	// wait starts from the database clock after the cancel, not from a read.
	if trimmedAtOnce == 0 {
		waitDBClockPast(t, dbClock(t).Add(short+2*time.Millisecond))
		_, trimmed, err := s.cancel(ctx, "absent", time.Hour, 100)
		require.NoError(t, err)
		require.Equal(t, 1, trimmed)
	}
	_, err = s.get(ctx, "short")
	require.ErrorIs(t, err, durable.ErrNotFound)
}
