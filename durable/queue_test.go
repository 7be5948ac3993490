package durable

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDefaultBackoff(t *testing.T) {
	for attempt := range 40 {
		limit := time.Hour
		if attempt < 13 {
			limit = min(time.Hour, time.Second<<max(attempt-1, 0))
		}
		for range 100 {
			d := DefaultBackoff(attempt)
			require.GreaterOrEqual(t, d, time.Duration(0))
			require.LessOrEqual(t, d, limit, "attempt %d", attempt)
		}
	}
}

// ExponentialBackoff keeps to its own bounds: attempt n waits at most
// min(limit, base*2^(n-1)), and bad bounds panic at the call.
func TestExponentialBackoff(t *testing.T) {
	b := ExponentialBackoff(100*time.Millisecond, 3*time.Second)
	var reached bool
	for attempt := 1; attempt < 10; attempt++ {
		ceiling := min(3*time.Second, 100*time.Millisecond<<(attempt-1))
		for range 200 {
			d := b(attempt)
			require.GreaterOrEqual(t, d, time.Duration(0))
			require.LessOrEqual(t, d, ceiling, "attempt %d", attempt)
			reached = reached || d > time.Second
		}
	}
	require.True(t, reached, "no wait above 1s in 1000 draws with a 3s ceiling: the limit is not the one given")
	require.PanicsWithValue(t, "durable: ExponentialBackoff(0s, 1s): want 0 < base <= limit", func() { ExponentialBackoff(0, time.Second) })
	require.Panics(t, func() { ExponentialBackoff(2*time.Second, time.Second) })
}

func TestMilliRounding(t *testing.T) {
	base := time.UnixMilli(1_700_000_000_000)
	assert.Equal(t, int64(1_700_000_000_000), unixMilliCeil(base))
	assert.Equal(t, int64(1_700_000_000_001), unixMilliCeil(base.Add(time.Nanosecond)), "never early: round up")
	assert.Equal(t, int64(1), unixMilliCeil(time.Time{}), "before 1970: due at once, at 1 ms, which every store reads back")
	assert.Equal(t, int64(1), unixMilliCeil(time.Unix(-1<<54, 0)), "before year -292 million: due at once, not wrapped")
	assert.Equal(t, int64(1), unixMilliCeil(time.UnixMilli(0)))
	assert.Equal(t, int64(1), unixMilliCeil(time.Unix(0, 1)))
	assert.Equal(t, int64(2), unixMilliCeil(time.Unix(0, 1_000_001)))
	assert.Equal(t, int64(1<<53), unixMilliCeil(time.Unix(1<<62, 0)), "far future: clamped, never early")
	assert.Equal(t, int64(0), durationMilliCeil(-time.Hour))
	assert.Equal(t, int64(2), durationMilliCeil(time.Millisecond+1))
	assert.Equal(t, int64(9223372036855), durationMilliCeil(time.Duration(1<<63-1)))
}
