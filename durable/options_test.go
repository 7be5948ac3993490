package durable

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestWorkerIDAndHistoryLenDefaults(t *testing.T) {
	o, err := Options{}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, DefaultHistoryLen, o.HistoryLen)
	assert.Regexp(t, `^.+:\d+:[0-9a-f]{4}$`, o.WorkerID)
	o, err = Options{WorkerID: "me", HistoryLen: 3}.withDefaults()
	require.NoError(t, err)
	assert.Equal(t, "me", o.WorkerID)
	assert.Equal(t, 3, o.HistoryLen)
	for _, bad := range []Options{{HistoryLen: -1}, {HistoryLen: MaxHistoryLen + 1}, {WorkerID: string(make([]byte, 257))}} {
		_, err := bad.withDefaults()
		assert.ErrorIs(t, err, ErrOptions)
	}
}
