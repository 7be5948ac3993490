package rediswheel

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Payload reads what Add stored, in any state, and nil once the key is in
// no state.
func TestPayload(t *testing.T) {
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			q := newQueue(t, srv.client(t), Options{})
			ctx := context.Background()
			p, err := q.st.Payload(ctx, "k")
			require.NoError(t, err)
			require.Nil(t, p, "no task")

			_, err = q.Add(ctx, "k", []byte("12345"), time.Now().Add(time.Hour))
			require.NoError(t, err)
			_, err = q.Add(ctx, "other", []byte("xyz"), time.Now().Add(time.Hour))
			require.NoError(t, err)
			p, err = q.st.Payload(ctx, "k")
			require.NoError(t, err)
			require.Equal(t, []byte("12345"), p)

			ok, err := q.Cancel(ctx, "k") // no retention: forgotten
			require.NoError(t, err)
			require.True(t, ok)
			p, err = q.st.Payload(ctx, "k")
			require.NoError(t, err)
			require.Nil(t, p, "cancelled and forgotten")
		})
	}
}
