package pgwheel

import (
	"database/sql"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"
)

// txKind is one kind of caller's transaction: pgx's or database/sql's,
// with the Tx methods under test bound to it.
type txKind struct {
	cancel     func(key string, retention time.Duration) (durable.CancelResult, error)
	replace    func(NewTask) ([]Added, error)
	reschedule func(key string, at time.Time) (durable.RescheduleResult, error)
	commit     func() error
	rollback   func() error
}

func txKinds(t *testing.T, s *Store) map[string]func(*testing.T) txKind {
	ctx := testCtx(t)
	db := stdlib.OpenDBFromPool(sharedPool)
	t.Cleanup(func() { db.Close() })
	return map[string]func(*testing.T) txKind{
		"pgx": func(t *testing.T) txKind {
			tx, err := sharedPool.Begin(ctx)
			require.NoError(t, err)
			t.Cleanup(func() { tx.Rollback(ctx) }) //nolint:errcheck // a failed test must not leave it open
			return txKind{
				func(key string, r time.Duration) (durable.CancelResult, error) { return s.CancelTx(ctx, tx, key, r, 0) },
				func(nt NewTask) ([]Added, error) { return s.ReplaceTx(ctx, tx, nt) },
				func(key string, at time.Time) (durable.RescheduleResult, error) {
					return s.RescheduleTx(ctx, tx, key, at)
				},
				func() error { return tx.Commit(ctx) }, func() error { return tx.Rollback(ctx) }}
		},
		"database/sql": func(t *testing.T) txKind {
			tx, err := db.BeginTx(ctx, nil)
			require.NoError(t, err)
			t.Cleanup(func() { tx.Rollback() }) //nolint:errcheck // a failed test must not leave it open
			return txKind{
				func(key string, r time.Duration) (durable.CancelResult, error) {
					return s.CancelSQLTx(ctx, tx, key, r, 0)
				},
				func(nt NewTask) ([]Added, error) { return s.ReplaceSQLTx(ctx, tx, nt) },
				func(key string, at time.Time) (durable.RescheduleResult, error) {
					return s.RescheduleSQLTx(ctx, tx, key, at)
				},
				tx.Commit, tx.Rollback}
		},
	}
}

// TestCancelInTransaction: a cancel in the caller's transaction takes
// effect at commit and not before; a rolled-back one leaves a due task to
// fire; a committed one means the task never fires, though it was due
// while the transaction was open (its locked row is skipped by claims); a
// task in flight is finished as cancelled by its settle.
func TestCancelInTransaction(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	past := time.UnixMilli(1000)
	for name, begin := range txKinds(t, s) {
		t.Run(name, func(t *testing.T) {
			key := name + "/rolled back"
			_, err := s.add(ctx, NewTask{Key: key, At: past})
			require.NoError(t, err)
			tx := begin(t)
			res, err := tx.cancel(key, 0)
			require.NoError(t, err)
			require.True(t, res.Found)
			c, err := s.claim(ctx, hourLease)
			require.NoError(t, err)
			require.Empty(t, c.Tasks, "a claim took a task an open transaction cancels")
			require.NoError(t, tx.rollback())
			claimUntil(t, s, key) // it fires

			key = name + "/committed"
			_, err = s.add(ctx, NewTask{Key: key, At: past})
			require.NoError(t, err)
			tx = begin(t)
			res, err = tx.cancel(key, time.Hour)
			require.NoError(t, err)
			require.True(t, res.Found)
			c, err = s.claim(ctx, hourLease)
			require.NoError(t, err)
			require.Empty(t, c.Tasks, "a claim took a task an open transaction cancels")
			info, err := s.get(ctx, key)
			require.NoError(t, err)
			require.Equal(t, durable.StateScheduled, info.State, "the cancel shows before its commit")
			require.NoError(t, tx.commit())
			c, err = s.claim(ctx, hourLease)
			require.NoError(t, err)
			require.Empty(t, c.Tasks, "a cancelled task was claimed")
			info, err = s.get(ctx, key)
			require.NoError(t, err)
			require.Equal(t, durable.StateCancelled, info.State, "retained as Queue.Cancel retains it")

			key = name + "/in flight"
			_, err = s.add(ctx, NewTask{Key: key, At: past})
			require.NoError(t, err)
			_, ct := claimUntil(t, s, key)
			tx = begin(t)
			res, err = tx.cancel(key, 0)
			require.NoError(t, err)
			require.True(t, res.Found)
			require.NoError(t, tx.commit())
			st, err := s.settle(ctx, settleParams{}, []settlement{{Key: key, Token: ct.Token, Outcome: durable.OutcomeRetry}})
			require.NoError(t, err)
			require.Equal(t, []durable.SettleCode{durable.SettleCancelled}, st.Codes)
			_, err = s.get(ctx, key)
			require.ErrorIs(t, err, durable.ErrNotFound)

			tx = begin(t)
			res, err = tx.cancel(name+"/none", 0)
			require.NoError(t, err)
			require.False(t, res.Found)
			require.NoError(t, tx.commit())
		})
	}
}

// TestReplaceAndRescheduleInTransaction: Replace and Reschedule in the
// caller's transaction take effect at commit; a rollback leaves the task
// as it was.
func TestReplaceAndRescheduleInTransaction(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	later := time.Now().Add(time.Hour).Truncate(time.Millisecond).UTC()
	for name, begin := range txKinds(t, s) {
		t.Run(name, func(t *testing.T) {
			key := name + "/k"
			_, err := s.add(ctx, NewTask{Key: key, At: later, Payload: []byte("old")})
			require.NoError(t, err)
			for _, commit := range []bool{false, true} {
				tx := begin(t)
				a, err := tx.replace(NewTask{Key: key, At: later.Add(time.Minute), Payload: []byte("new")})
				require.NoError(t, err)
				require.Equal(t, durable.AddStored, a[0].Status)
				r, err := tx.reschedule(key, later.Add(2*time.Minute))
				require.NoError(t, err)
				require.Equal(t, durable.RescheduleMoved, r)
				info, err := s.get(ctx, key)
				require.NoError(t, err)
				require.Equal(t, later, info.Due, "a change shows before its commit")
				if !commit {
					require.NoError(t, tx.rollback())
					p, err := s.Payload(ctx, key)
					require.NoError(t, err)
					require.Equal(t, []byte("old"), p)
					continue
				}
				require.NoError(t, tx.commit())
				info, err = s.get(ctx, key)
				require.NoError(t, err)
				require.Equal(t, later.Add(2*time.Minute), info.Due)
				p, err := s.Payload(ctx, key)
				require.NoError(t, err)
				require.Equal(t, []byte("new"), p)
			}
		})
	}
}

func TestTxNilPanics(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	require.PanicsWithValue(t, "pgwheel.CancelTx: nil transaction", func() { s.CancelTx(ctx, pgx.Tx(nil), "k", 0, 0) })               //nolint:errcheck
	require.PanicsWithValue(t, "pgwheel.CancelSQLTx: nil transaction", func() { s.CancelSQLTx(ctx, (*sql.Tx)(nil), "k", 0, 0) })      //nolint:errcheck
	require.PanicsWithValue(t, "pgwheel.ReplaceTx: nil transaction", func() { s.ReplaceTx(ctx, pgx.Tx(nil)) })                        //nolint:errcheck
	require.PanicsWithValue(t, "pgwheel.RescheduleTx: nil transaction", func() { s.RescheduleTx(ctx, pgx.Tx(nil), "k", time.Now()) }) //nolint:errcheck
	_, err := s.CancelTx(ctx, nilTxNeverUsed{}, "", 0, 0)
	require.ErrorIs(t, err, durable.ErrKey)
}

// nilTxNeverUsed is a pgx.Tx that fails the test if used: argument checks
// come before any statement.
type nilTxNeverUsed struct{ pgx.Tx }
