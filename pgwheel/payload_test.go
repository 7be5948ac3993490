package pgwheel

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Payload reads what Add stored while the task is in some state, nothing
// once a retained task dropped it, nil for a key in no state.
func TestPayload(t *testing.T) {
	st := newStore(t)
	ctx := context.Background()
	req := &durable.AddRequest{Key: "k", Payload: []byte("body"), Relative: true, At: time.Hour.Milliseconds()}
	st.Add(ctx, []*durable.AddRequest{req})
	require.NoError(t, req.Err)
	require.Equal(t, durable.AddStored, req.Status)

	b, err := st.Payload(ctx, "k")
	require.NoError(t, err)
	require.Equal(t, []byte("body"), b)
	b, err = st.Payload(ctx, "none")
	require.NoError(t, err)
	require.Nil(t, b)

	res, err := st.Cancel(ctx, "k", time.Hour, 10)
	require.NoError(t, err)
	require.True(t, res.Found)
	b, err = st.Payload(ctx, "k")
	require.NoError(t, err)
	require.NotNil(t, b, "retained")
	require.Empty(t, b, "its payload dropped")
}
