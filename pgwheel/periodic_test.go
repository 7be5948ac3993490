package pgwheel

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestPeriodicRegistry: registration is once per name, Advance moves the
// pointer only from the value the caller read (one winner among racing
// processes), never backwards, and Remove forgets it.
func TestPeriodicRegistry(t *testing.T) {
	s := newStore(t)
	ctx := testCtx(t)
	st, err := s.periodicRead(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, periodicMissing, st.Status)
	require.True(t, st.Pointer.IsZero())

	before := dbClock(t)
	reg, err := s.periodicRegister(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, periodicDone, reg.Status)
	require.Equal(t, reg.Now, reg.Pointer)
	require.False(t, reg.Pointer.Before(before.Truncate(time.Millisecond)))
	again, err := s.periodicRegister(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, periodicNotDone, again.Status)
	require.Equal(t, reg.Pointer, again.Pointer)

	// Four processes advance from the same pointer while a fifth holds the
	// row, so that all of them wait and race when it lets go.
	next := reg.Pointer.Add(time.Minute)
	holder, err := sharedPool.Begin(ctx)
	require.NoError(t, err)
	defer holder.Rollback(ctx) //nolint:errcheck
	_, err = holder.Exec(ctx, `SELECT 1 FROM pgwheel_periodic WHERE namespace = $1 AND name = 'p' FOR UPDATE`, s.Namespace())
	require.NoError(t, err)
	var wg sync.WaitGroup
	results := make([]periodicState, 4)
	errs := make([]error, len(results))
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = s.periodicAdvance(ctx, "p", reg.Pointer, next)
		}()
	}
	deadline := time.Now().Add(patience)
	for waiting := 0; waiting < len(results); {
		require.NoError(t, sharedPool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE OF p%'`).Scan(&waiting))
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d advances waiting on the row after %v", waiting, len(results), patience)
		}
		time.Sleep(time.Millisecond)
	}
	require.NoError(t, holder.Rollback(ctx))
	wg.Wait()
	won := 0
	for i, r := range results {
		require.NoError(t, errs[i])
		require.Equal(t, next, r.Pointer)
		if r.Status == periodicDone {
			won++
		} else {
			require.Equal(t, periodicNotDone, r.Status)
		}
	}
	require.Equal(t, 1, won, "advances from the same pointer: exactly one wins")
	_, err = s.periodicAdvance(ctx, "p", next, reg.Pointer)
	require.ErrorIs(t, err, ErrArgument, "backwards")

	rm, err := s.periodicRemove(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, periodicNotDone, rm.Status)
	require.Equal(t, next, rm.Pointer)
	rm, err = s.periodicRemove(ctx, "p")
	require.NoError(t, err)
	require.Equal(t, periodicMissing, rm.Status)
	adv, err := s.periodicAdvance(ctx, "p", next, next.Add(time.Minute))
	require.NoError(t, err)
	require.Equal(t, periodicMissing, adv.Status)
}
