package durable

import (
	"context"
	"strings"
	"testing"
	"time"

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

// Keys are checked by the Queue, the same for every store: 1..MaxKeyLen
// bytes of UTF-8 without NUL (PostgreSQL's text holds nothing else).
func TestCheckKey(t *testing.T) {
	for _, tc := range []struct {
		key string
		ok  bool
	}{
		{"k", true}, {"order:1001", true}, {"é✓", true}, {string(make([]byte, 0)), false},
		{"\x00", false}, {"a\x00b", false}, {"\xff", false}, {"a\xc3", false}, {"\xed\xa0\x80", false}, // a UTF-16 surrogate
		{strings.Repeat("k", MaxKeyLen), true}, {strings.Repeat("k", MaxKeyLen+1), false},
	} {
		err := checkKey(tc.key)
		if tc.ok {
			assert.NoError(t, err, "%q", tc.key)
		} else {
			assert.ErrorIs(t, err, ErrKey, "%q", tc.key)
		}
	}
}

// AddBatch checks every item before it sends any: one bad key or option
// anywhere stores nothing (the stub store panics if called).
func TestAddBatchChecksAllFirst(t *testing.T) {
	q := stubQueue(t, Options{})
	ctx := context.Background()
	_, err := q.AddBatch(ctx, []Item{{Key: "a"}, {Key: "b\x00"}, {Key: "c"}})
	assert.ErrorIs(t, err, ErrKey)
	_, err = q.AddBatch(ctx, []Item{{Key: "a"}, {Key: "b", Options: []TaskOption{TaskMaxAttempts(-1)}}})
	assert.ErrorIs(t, err, ErrTaskOption)
	_, err = q.Add(ctx, "b\xff", nil, time.Now())
	assert.ErrorIs(t, err, ErrKey)
	err = q.Replace(ctx, "b\x00", nil, time.Now())
	assert.ErrorIs(t, err, ErrKey)
}

// A payload over MaxPayloadLen is refused before any store call, alone or
// in a batch. The slice is never written, so its pages are never touched.
func TestPayloadLen(t *testing.T) {
	q := stubQueue(t, Options{})
	ctx := context.Background()
	big := make([]byte, MaxPayloadLen+1)
	_, err := q.Add(ctx, "k", big, time.Now())
	assert.ErrorIs(t, err, ErrPayload)
	_, err = q.AddBatch(ctx, []Item{{Key: "a"}, {Key: "b", Payload: big}})
	assert.ErrorIs(t, err, ErrPayload)
	assert.NoError(t, checkPayload(big[:MaxPayloadLen]))
}
