package pgwheel

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"
)

// hourLease keeps every lease of a test that does not test expiry alive
// for the whole test.
var hourLease = claimParams{Limit: 128, Lease: time.Hour, MaxAttempts: 3, ReapLimit: 128, DeadCap: 1000,
	HistoryLen: 10, WorkerID: "w", UnconfirmedBound: 3}

// claimAll claims until key is leased, within patience.
func claimUntil(t *testing.T, s *Store, key string) (claimed, claimedTask) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for {
		c, err := s.claim(testCtx(t), hourLease)
		require.NoError(t, err)
		for _, ct := range c.Tasks {
			if ct.Key == key {
				return c, ct
			}
		}
		require.Empty(t, c.Tasks, "claimed another task")
		if time.Now().After(deadline) {
			t.Fatalf("%q not claimed within %v", key, patience)
		}
		time.Sleep(100 * time.Microsecond)
	}
}

// TestNeverEarly: a relative due time counts from the database clock at
// the call, rounded up, and a task is never leased before it by that clock,
// whatever the delay's sub-millisecond part.
func TestNeverEarly(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	for i, d := range []time.Duration{0, 1, 999 * time.Microsecond, time.Millisecond, 1500 * time.Microsecond, 3*time.Millisecond + 1, 20 * time.Millisecond} {
		key := fmt.Sprintf("k%d", i)
		before := dbClock(t)
		a, err := s.add(ctx, NewTask{Key: key, After: d})
		require.NoError(t, err)
		require.Equal(t, durable.AddStored, a[0].Status)
		earliest := before.Add(d)
		if d == 0 {
			// At once is the call's millisecond, rounded down as every
			// stored time: no claim can see the task before the call.
			earliest = before.Truncate(time.Millisecond)
		}
		require.False(t, a[0].Due.Before(earliest), "delay %v: due %v before the call's clock %v + delay", d, a[0].Due, before)
		c, ct := claimUntil(t, s, key)
		require.Equal(t, a[0].Due, ct.Due)
		require.False(t, c.Now.Before(ct.Due), "delay %v: leased at %v, due %v", d, c.Now, ct.Due)
		after := dbClock(t)
		require.False(t, after.Before(before.Add(d)), "delay %v: leased before the call's clock + delay", d)
	}
	// An absolute time with a sub-millisecond part is rounded up, never down.
	at := dbClock(t).Add(5 * time.Millisecond).Truncate(time.Millisecond).Add(300 * time.Microsecond)
	a, err := s.add(ctx, NewTask{Key: "abs", At: at})
	require.NoError(t, err)
	require.Equal(t, at.Truncate(time.Millisecond).Add(time.Millisecond), a[0].Due)
	c, _ := claimUntil(t, s, "abs")
	require.False(t, c.Now.Before(at))
}

// TestAddTxCountsFromTheCall: in a transaction opened long before, the
// delay counts from the add (clock_timestamp), not from BEGIN (now()).
func TestAddTxCountsFromTheCall(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	tx, err := sharedPool.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx) //nolint:errcheck
	var begin time.Time
	require.NoError(t, tx.QueryRow(ctx, `SELECT now()`).Scan(&begin))
	waitDBClockPast(t, begin.Add(50*time.Millisecond))
	before := dbClock(t)
	a, err := s.AddTx(ctx, tx, NewTask{Key: "k", After: 10 * time.Millisecond})
	require.NoError(t, err)
	require.False(t, a[0].Due.Before(before.Add(10*time.Millisecond)), "due %v counts from BEGIN %v, not the call %v", a[0].Due, begin, before)
	require.NoError(t, tx.Commit(ctx))
}

// TestFencing: once a lease expires and the task is claimed again, the
// first delivery's token can neither extend nor settle it; the current one
// can.
func TestFencing(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	_, err := s.add(ctx, NewTask{Key: "k"})
	require.NoError(t, err)
	short := hourLease
	short.Lease = time.Millisecond
	c1, err := s.claim(ctx, short)
	require.NoError(t, err)
	require.Len(t, c1.Tasks, 1)
	first := c1.Tasks[0]
	info, err := s.get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, durable.StateInFlight, info.State)
	waitDBClockPast(t, info.Due)

	c2, err := s.claim(ctx, hourLease) // reaps the expired lease, leases again
	require.NoError(t, err)
	require.Len(t, c2.Tasks, 1)
	second := c2.Tasks[0]
	require.NotEqual(t, first.Token, second.Token)
	// The first claim was never confirmed (no Extend or Settle): maybe a
	// lost reply, so its attempt was given back.
	require.Equal(t, 1, second.Attempt)

	leased, err := s.get(ctx, "k")
	require.NoError(t, err)
	codes, err := s.extend(ctx, 3*time.Hour, []held{{"k", first.Token}})
	require.NoError(t, err)
	require.Equal(t, []durable.ExtendCode{durable.ExtendLost}, codes)
	info, err = s.get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, leased.Due, info.Due, "a stale extend moved the lease")
	st, err := s.settle(ctx, settleParams{HistoryLen: 10, DeadCap: 10}, []settlement{{Key: "k", Token: first.Token, Outcome: durable.OutcomeDone}})
	require.NoError(t, err)
	require.Equal(t, []durable.SettleCode{durable.SettleRejected}, st.Codes)
	info, err = s.get(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, durable.StateInFlight, info.State, "a stale settle changed the task")

	codes, err = s.extend(ctx, time.Hour, []held{{"k", second.Token}, {"k", first.Token}})
	require.NoError(t, err)
	require.Equal(t, []durable.ExtendCode{durable.ExtendOK, durable.ExtendLost}, codes)
	st, err = s.settle(ctx, settleParams{HistoryLen: 10, DeadCap: 10}, []settlement{{Key: "k", Token: second.Token, Outcome: durable.OutcomeDone}})
	require.NoError(t, err)
	require.Equal(t, []durable.SettleCode{durable.SettleDone}, st.Codes)
	_, err = s.get(ctx, "k")
	require.ErrorIs(t, err, durable.ErrNotFound)
}

// TestConcurrentClaimersNeverShare: claimers racing on one backlog lease
// every task exactly once (FOR UPDATE SKIP LOCKED), each with its own token.
func TestConcurrentClaimersNeverShare(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	const n = 600
	tasks := make([]NewTask, n)
	for i := range tasks {
		tasks[i] = NewTask{Key: fmt.Sprintf("k%04d", i)}
	}
	_, err := s.add(ctx, tasks...)
	require.NoError(t, err)

	var mu sync.Mutex
	owner := map[string]int{}
	tokens := map[int64]bool{}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := hourLease
			p.Limit = 7
			for {
				c, err := s.claim(ctx, p)
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				for _, ct := range c.Tasks {
					if prev, ok := owner[ct.Key]; ok {
						mu.Unlock()
						errs <- fmt.Errorf("%s leased by claimer %d and %d", ct.Key, prev, w)
						return
					}
					owner[ct.Key] = w
					if tokens[ct.Token] {
						mu.Unlock()
						errs <- fmt.Errorf("token %d given twice", ct.Token)
						return
					}
					tokens[ct.Token] = true
				}
				done := len(owner) == n
				mu.Unlock()
				if done || (len(c.Tasks) == 0 && c.Next.After(c.Now)) {
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	require.Len(t, owner, n)
	st, err := s.Stats(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(n), st[0].InFlight)
	require.Equal(t, int64(0), st[0].Due)
}

// TestAddInTransaction: a task added in the caller's transaction is
// invisible to claims while it is open, claimable once it commits, and
// gone with a rollback; for pgx and database/sql transactions alike.
func TestAddInTransaction(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	db := stdlib.OpenDBFromPool(sharedPool)
	defer db.Close()

	type txn struct {
		add      func(NewTask) ([]Added, error)
		commit   func() error
		rollback func() error
	}
	kinds := map[string]func(*testing.T) txn{
		"pgx": func(t *testing.T) txn {
			tx, err := sharedPool.Begin(ctx)
			require.NoError(t, err)
			t.Cleanup(func() { tx.Rollback(ctx) }) //nolint:errcheck // a failed test must not leave it open
			return txn{func(nt NewTask) ([]Added, error) { return s.AddTx(ctx, tx, nt) },
				func() error { return tx.Commit(ctx) }, func() error { return tx.Rollback(ctx) }}
		},
		"database/sql": func(t *testing.T) txn {
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			t.Cleanup(func() { tx.Rollback() }) //nolint:errcheck // a failed test must not leave it open
			return txn{func(nt NewTask) ([]Added, error) { return s.AddSQLTx(ctx, tx, nt) }, tx.Commit, tx.Rollback}
		},
	}
	for name, begin := range kinds {
		t.Run(name, func(t *testing.T) {
			key := name + "/committed"
			tx := begin(t)
			a, err := tx.add(NewTask{Key: key, Payload: []byte("p")})
			require.NoError(t, err)
			require.Equal(t, durable.AddStored, a[0].Status)
			c, err := s.claim(ctx, hourLease)
			require.NoError(t, err)
			require.Empty(t, c.Tasks, "a task of an open transaction was claimed")
			_, err = s.get(ctx, key)
			require.ErrorIs(t, err, durable.ErrNotFound)
			require.NoError(t, tx.commit())
			_, ct := claimUntil(t, s, key)
			require.Equal(t, []byte("p"), ct.Payload)

			key = name + "/rolled back"
			tx = begin(t)
			_, err = tx.add(NewTask{Key: key})
			require.NoError(t, err)
			require.NoError(t, tx.rollback())
			_, err = s.get(ctx, key)
			require.ErrorIs(t, err, durable.ErrNotFound)
			c, err = s.claim(ctx, hourLease)
			require.NoError(t, err)
			require.Empty(t, c.Tasks)
			// The key is free: the rollback left no trace.
			a, err = s.add(ctx, NewTask{Key: key, After: time.Hour})
			require.NoError(t, err)
			require.Equal(t, durable.AddStored, a[0].Status)
		})
	}
}

// TestWakeUpAtCommit: a Listener hears an add of an earlier task when its
// transaction commits, and nothing of one rolled back.
func TestWakeUpAtCommit(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	l, err := s.Listen(ctx)
	require.NoError(t, err)
	defer l.Close()
	// Another namespace's wake-ups are not ours.
	other := newStore(t)
	_, err = other.add(ctx, NewTask{Key: "x", At: time.UnixMilli(1000)})
	require.NoError(t, err)

	rolledBack := time.UnixMilli(2000).UTC()
	tx, err := sharedPool.Begin(ctx)
	require.NoError(t, err)
	a, err := s.AddTx(ctx, tx, NewTask{Key: "gone", At: rolledBack})
	require.NoError(t, err)
	require.True(t, a[0].Notified)
	require.NoError(t, tx.Rollback(ctx))

	committed := time.UnixMilli(3000).UTC()
	a, err = s.add(ctx, NewTask{Key: "kept", At: committed})
	require.NoError(t, err)
	require.True(t, a[0].Notified)
	wctx, cancel := context.WithTimeout(ctx, patience)
	defer cancel()
	due, err := l.Wait(wctx)
	require.NoError(t, err, "no wake-up within %v", patience)
	require.Equal(t, committed, due, "the first wake-up is not the committed add's")

	// A later task than one already scheduled sends none.
	a, err = s.add(ctx, NewTask{Key: "later", At: committed.Add(time.Hour)})
	require.NoError(t, err)
	require.False(t, a[0].Notified)
}

// TestBadInput: sentinel errors, before anything is written.
func TestBadInput(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	_, err := New(sharedPool, "")
	require.ErrorIs(t, err, ErrNamespace)
	for _, key := range []string{"", "a\x00b", "\xff", string(make([]byte, MaxKeyLen+1))} {
		_, err := s.add(ctx, NewTask{Key: "fine"}, NewTask{Key: key})
		require.ErrorIs(t, err, durable.ErrKey, "%q", key)
	}
	_, err = s.get(ctx, "fine")
	require.ErrorIs(t, err, durable.ErrNotFound, "a batch with a bad key stored its good one")
	_, err = s.add(ctx, NewTask{Key: "k", Policy: durable.Policy{MaxAttempts: -1}})
	require.ErrorIs(t, err, durable.ErrTaskOption)
	_, err = s.add(ctx, NewTask{Key: "k", Policy: durable.Policy{Type: "a\x00b"}})
	require.ErrorIs(t, err, durable.ErrTaskOption)
	_, err = s.settle(ctx, settleParams{}, []settlement{{Key: "k", Outcome: "typo"}})
	require.ErrorIs(t, err, ErrArgument)
	_, err = s.settle(ctx, settleParams{}, []settlement{{Key: "k", Outcome: durable.OutcomeRetry, Delay: -1}})
	require.ErrorIs(t, err, ErrArgument)
	_, err = s.claim(ctx, claimParams{Limit: 1})
	require.ErrorIs(t, err, ErrArgument, "zero lease")
	_, _, err = s.List(ctx, "nope", nil, 10)
	require.ErrorIs(t, err, durable.ErrState)
	_, _, err = s.List(ctx, durable.StateDead, nil, 0)
	require.ErrorIs(t, err, durable.ErrLimit)
	_, err = s.periodicRead(ctx, "a\x00b")
	require.ErrorIs(t, err, durable.ErrPeriodicName)
	_, err = s.extend(ctx, 0, nil)
	require.ErrorIs(t, err, ErrArgument)
	require.PanicsWithValue(t, "pgwheel.AddTx: nil transaction", func() { s.AddTx(ctx, pgx.Tx(nil)) })          //nolint:errcheck
	require.PanicsWithValue(t, "pgwheel.AddSQLTx: nil transaction", func() { s.AddSQLTx(ctx, (*sql.Tx)(nil)) }) //nolint:errcheck
}
