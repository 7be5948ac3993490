package durable

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestEvery(t *testing.T) {
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339Nano, s)
		require.NoError(t, err)
		return v
	}
	for _, c := range []struct {
		d        time.Duration
		from, to string
	}{
		{200 * time.Millisecond, "2026-01-01T10:00:00Z", "2026-01-01T10:00:00.2Z"},
		{200 * time.Millisecond, "2026-01-01T10:00:00.199Z", "2026-01-01T10:00:00.2Z"},
		{200 * time.Millisecond, "2026-01-01T10:00:00.2Z", "2026-01-01T10:00:00.4Z"},
		{time.Hour, "2026-01-01T10:59:59.999Z", "2026-01-01T11:00:00Z"},
		{time.Hour, "2026-01-01T11:00:00Z", "2026-01-01T12:00:00Z"},
		{24 * time.Hour, "2026-01-01T23:00:00Z", "2026-01-02T00:00:00Z"},
	} {
		assert.Equal(t, at(c.to), Every(c.d).Next(at(c.from)), "Every(%v).Next(%s)", c.d, c.from)
	}
	assert.PanicsWithValue(t, "durable: Every(999µs): the interval must be at least 1ms", func() { Every(999 * time.Microsecond) })
	assert.Panics(t, func() { Every(-time.Second) })
}
