package sqlitewheel

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/require"
)

// appTables opens a store and creates the application's table in its file.
func appTables(t *testing.T) (*Store, *sql.DB) {
	st, _ := openTemp(t, Options{})
	db := st.DB()
	_, err := db.Exec(`CREATE TABLE orders (id TEXT PRIMARY KEY, state TEXT NOT NULL)`)
	require.NoError(t, err)
	return st, db
}

func orderState(t *testing.T, db *sql.DB, id string) string {
	t.Helper()
	var state string
	err := db.QueryRow(`SELECT state FROM orders WHERE id = ?`, id).Scan(&state)
	if err == sql.ErrNoRows {
		return ""
	}
	require.NoError(t, err)
	return state
}

// TestAddTxInAppTransaction: a task added in the application's transaction
// is stored with the application's rows when it commits, invisible before,
// and gone, with them, when it rolls back.
func TestAddTxInAppTransaction(t *testing.T) {
	st, db := appTables(t)
	ctx := context.Background()

	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO orders VALUES ('1', 'unpaid')`)
	require.NoError(t, err)
	a, err := st.AddTx(ctx, tx, NewTask{Key: "order:1", Payload: []byte("p")})
	require.NoError(t, err)
	require.Equal(t, durable.AddStored, a[0].Status)
	require.Nil(t, get(t, st, "order:1"), "a task of an open transaction is visible")
	require.NoError(t, tx.Commit())
	require.Equal(t, "unpaid", orderState(t, db, "1"))
	require.Contains(t, claimAll(t, st, time.Hour, limits), "order:1")

	tx, err = db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = tx.Exec(`INSERT INTO orders VALUES ('2', 'unpaid')`)
	require.NoError(t, err)
	a, err = st.AddTx(ctx, tx, NewTask{Key: "order:2"}, NewTask{Key: "order:1"})
	require.NoError(t, err)
	require.Equal(t, []durable.AddStatus{durable.AddStored, durable.AddExists}, []durable.AddStatus{a[0].Status, a[1].Status})
	require.NoError(t, tx.Rollback())
	require.Nil(t, get(t, st, "order:2"), "a rolled-back AddTx stored its task")
	require.Equal(t, "", orderState(t, db, "2"))
	require.Empty(t, claimAll(t, st, time.Hour, limits))

	// Bad input stores nothing, and leaves the transaction usable.
	tx, err = db.BeginTx(ctx, nil)
	require.NoError(t, err)
	_, err = st.AddTx(ctx, tx, NewTask{Key: "fine"}, NewTask{Key: "a\x00b"})
	require.ErrorIs(t, err, durable.ErrKey)
	_, err = st.AddTx(ctx, tx, NewTask{Key: "k", Policy: durable.Policy{MaxAttempts: -1}})
	require.ErrorIs(t, err, durable.ErrTaskOption)
	require.NoError(t, tx.Commit())
	require.Nil(t, get(t, st, "fine"))
	require.PanicsWithValue(t, "sqlitewheel.AddTx: nil transaction", func() { st.AddTx(ctx, nil) })                  //nolint:errcheck
	require.PanicsWithValue(t, "sqlitewheel.CancelTx: nil transaction", func() { st.CancelTx(ctx, nil, "k", 0, 0) }) //nolint:errcheck
}

// TestAddTxCountsFromTheCall: a relative due time counts from AddTx's
// clock, never earlier.
func TestAddTxCountsFromTheCall(t *testing.T) {
	st, db := appTables(t)
	ctx := context.Background()
	tx, err := db.BeginTx(ctx, nil)
	require.NoError(t, err)
	before := time.Now()
	a, err := st.AddTx(ctx, tx, NewTask{Key: "k", After: time.Hour})
	require.NoError(t, err)
	require.NoError(t, tx.Commit())
	require.False(t, a[0].Due.Before(before.Add(time.Hour)), "due %v, before %v", a[0].Due, before.Add(time.Hour))
	require.Equal(t, a[0].Due, get(t, st, "k").Due)
}

// TestCancelTxInAppTransaction: a rolled-back CancelTx leaves a due task
// to fire; a committed one means it never fires, due though it was; a task
// in flight is finished as cancelled by its settle.
func TestCancelTxInAppTransaction(t *testing.T) {
	st, db := appTables(t)
	ctx := context.Background()
	add(t, st, "in flight")
	lease := claimAll(t, st, time.Hour, limits)["in flight"]
	require.NotEmpty(t, lease.Token)
	add(t, st, "rolled back", "committed")

	pay := func(key string, commit bool) durable.CancelResult {
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = tx.Exec(`INSERT INTO orders VALUES (?, 'paid')`, key)
		require.NoError(t, err)
		res, err := st.CancelTx(ctx, tx, key, time.Hour, 0)
		require.NoError(t, err)
		if commit {
			require.NoError(t, tx.Commit())
		} else {
			require.NoError(t, tx.Rollback())
		}
		return res
	}
	require.True(t, pay("rolled back", false).Found)
	require.True(t, pay("committed", true).Found)
	require.Equal(t, durable.StateCancelled, get(t, st, "committed").State)
	require.Equal(t, "paid", orderState(t, db, "committed"))
	require.Equal(t, "", orderState(t, db, "rolled back"))
	claimed := claimAll(t, st, time.Hour, limits)
	require.Contains(t, claimed, "rolled back", "a rolled-back cancel stopped the task")
	require.NotContains(t, claimed, "committed", "a cancelled task fired")

	require.True(t, pay("in flight", true).Found)
	lim := limits
	lim.Retention = time.Hour
	s := settle(t, st, lim, durable.Outcome{Key: "in flight", Token: lease.Token, Kind: durable.OutcomeRetry, Delay: 1})
	require.Equal(t, []durable.SettleCode{durable.SettleCancelled}, s.Codes)
	require.Equal(t, durable.StateCancelled, get(t, st, "in flight").State)
	require.False(t, pay("none", true).Found)
}

// TestAddTxWakesAnIdleRun: an idle Run, whose poll would come only in an
// hour, delivers a task an application's transaction added as soon as it
// commits, and is not woken by one rolled back (nothing to deliver).
func TestAddTxWakesAnIdleRun(t *testing.T) {
	st, db := appTables(t)
	q, err := durable.New(st, durable.Options{PollInterval: time.Hour})
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	ran := make(chan string, 4)
	done := make(chan error, 1)
	go func() {
		done <- q.Run(ctx, func(_ context.Context, task durable.Task) error { ran <- task.Key; return nil })
	}()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	// Once Notify listens, the Run's claims have found nothing: it sleeps
	// for the PollInterval.
	deadline := time.Now().Add(patience)
	for listening := false; !listening; {
		require.True(t, time.Now().Before(deadline), "Notify never listened")
		time.Sleep(time.Millisecond)
		st.wakes.mu.Lock()
		listening = len(st.wakes.listeners) > 0
		st.wakes.mu.Unlock()
	}

	for _, commit := range []bool{false, true} {
		tx, err := db.BeginTx(ctx, nil)
		require.NoError(t, err)
		_, err = st.AddTx(ctx, tx, NewTask{Key: "order:" + map[bool]string{false: "gone", true: "kept"}[commit]})
		require.NoError(t, err)
		if commit {
			require.NoError(t, tx.Commit())
		} else {
			require.NoError(t, tx.Rollback())
		}
	}
	select {
	case key := <-ran:
		require.Equal(t, "order:kept", key)
	case <-time.After(patience):
		t.Fatalf("the task committed in the application's transaction was not delivered within %v", patience)
	}
}
