package durable

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A cursor survives any key, '|' and all, and is opaque URL-safe text.
func TestListCursorRoundTrip(t *testing.T) {
	for _, pos := range []ListPos{{At: 0, Key: "k"}, {At: 1<<53 - 1, Key: "a|b|c"}, {At: 1, Key: "\x00\xff é"}} {
		c := encodeCursor(StateInFlight, pos)
		assert.NotContains(t, c, "|")
		got, err := decodeCursor(StateInFlight, c)
		require.NoError(t, err)
		assert.Equal(t, pos, got)
		_, err = decodeCursor(StateDead, c)
		assert.ErrorIs(t, err, ErrCursor)
	}
}
