package pgwheel

import (
	"testing"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/durable/storetest"
	"github.com/stretchr/testify/require"
)

// The delivery contract's behavioural suite, each test on a fresh namespace
// of the run's schema (dropped with it at the end of the run).
func TestStoreContract(t *testing.T) {
	needDB(t)
	storetest.Run(t, func(t *testing.T) durable.Store {
		s, err := New(sharedPool, t.Name()+"/"+randomHex(4))
		require.NoError(t, err)
		return s
	})
}
