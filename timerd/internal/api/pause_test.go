package api

import (
	"context"
	"testing"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// POST /v1/pause stops deliveries on every shard and /v1/resume starts them
// again, as the dashboard's buttons do; /v1/stats says which; a body other
// than {} is a 400 and changes nothing.
func TestPauseResume(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		paused := func() bool {
			st, err := f.q.Stats(context.Background())
			require.NoError(t, err)
			return st.Paused
		}
		r := f.do("POST", "/v1/pause", `{"now":true}`)
		assert.Equal(t, 400, r.status, "%s", r.raw)
		assert.False(t, paused(), "a refused pause paused")

		r = f.do("POST", "/v1/pause", "")
		require.Equal(t, 200, r.status, "%s", r.raw)
		assert.Equal(t, true, r.body["paused"])
		assert.True(t, paused())
		assert.Equal(t, true, f.do("GET", "/v1/stats", "").body["paused"])
		r = f.do("POST", "/v1/pause", "{}")
		assert.Equal(t, 200, r.status, "pausing a paused queue: %s", r.raw)

		r = f.do("POST", "/v1/resume", "")
		require.Equal(t, 200, r.status, "%s", r.raw)
		assert.Equal(t, false, r.body["paused"])
		assert.False(t, paused())
		assert.Equal(t, false, f.do("GET", "/v1/stats", "").body["paused"])
	})
}
