package durable

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A cursor survives any key, '|' and all, and is opaque URL-safe text; a
// position whose key checkKey refuses is not one List made.
func TestListCursorRoundTrip(t *testing.T) {
	for _, pos := range []ListPos{{At: 0, Key: "k"}, {At: 1<<53 - 1, Key: "a|b|c"}, {At: 1, Key: "\x01\t é|"}} {
		c := encodeCursor(StateInFlight, pos)
		assert.NotContains(t, c, "|")
		got, err := decodeCursor(StateInFlight, c)
		require.NoError(t, err)
		assert.Equal(t, pos, got)
		_, err = decodeCursor(StateDead, c)
		assert.ErrorIs(t, err, ErrCursor)
	}
	for _, key := range []string{"\x00", "\xff"} {
		_, err := decodeCursor(StateDead, encodeCursor(StateDead, ListPos{At: 1, Key: key}))
		assert.ErrorIs(t, err, ErrCursor, "%q", key)
	}
}
