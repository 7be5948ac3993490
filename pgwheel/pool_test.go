package pgwheel

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestListenerOutsideThePool: a Listener (and so a Run's Notify) listens on
// a connection of its own, not one of the pool's, which the Queue's claims
// and the application's statements need.
func TestListenerOutsideThePool(t *testing.T) {
	needDB(t)
	ctx := testCtx(t)
	pool, err := poolIn(ctx, testSchema, MinPoolConns, "")
	require.NoError(t, err)
	defer pool.Close()
	s, err := New(pool, "listener")
	require.NoError(t, err)
	l, err := s.Listen(ctx)
	require.NoError(t, err)
	defer l.Close()
	require.Zero(t, pool.Stat().AcquiredConns(), "the Listener holds a connection of the pool")
	require.Zero(t, pool.Stat().TotalConns(), "the Listener opened its connection in the pool")
}

// TestNewRefusesASmallPool: a pool that cannot serve one Run's claim,
// settle and heartbeat and one more statement at once is refused at New,
// with a text saying how large it must be.
func TestNewRefusesASmallPool(t *testing.T) {
	needDB(t)
	ctx := testCtx(t)
	for _, size := range []int32{1, MinPoolConns - 1} {
		pool, err := poolIn(ctx, testSchema, size, "")
		require.NoError(t, err)
		_, err = New(pool, "small")
		pool.Close()
		require.ErrorIs(t, err, ErrPoolTooSmall, "MaxConns %d", size)
		require.ErrorContains(t, err, "pool_max_conns")
	}
	pool, err := poolIn(ctx, testSchema, MinPoolConns, "")
	require.NoError(t, err)
	defer pool.Close()
	_, err = New(pool, "enough")
	require.NoError(t, err)
}
