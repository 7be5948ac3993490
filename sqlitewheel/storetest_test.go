package sqlitewheel

import (
	"testing"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/durable/storetest"
)

// The delivery contract's behavioural suite, each test on a fresh file.
func TestStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) durable.Store {
		st, _ := openTemp(t, Options{})
		t.Cleanup(func() { checkCounts(t, st) })
		return st
	})
}
