package durable

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// stubStore is a Store of one partition that must never be called: its
// embedded nil interface panics on any operation. A Queue on it tests what
// the Queue decides on its own (arguments refused before any store call,
// outcomes of handler results).
type stubStore struct{ Store }

func (stubStore) Partitions() int { return 1 }

// stubQueue is a Queue on a stubStore with opts.
func stubQueue(t testing.TB, opts Options) *Queue {
	t.Helper()
	return stubQueueOn(t, stubStore{}, opts)
}

// stubQueueOn is a Queue on st with opts.
func stubQueueOn(t testing.TB, st Store, opts Options) *Queue {
	t.Helper()
	q, err := New(st, opts)
	require.NoError(t, err)
	return q
}
