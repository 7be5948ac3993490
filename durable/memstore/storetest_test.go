package memstore_test

import (
	"testing"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/durable/memstore"
	"github.com/go-timingwheel/timingwheel/durable/storetest"
)

// The delivery contract's behavioural suite, on one partition and on four
// (so that keys spread over partitions, as on a sharded Redis store).
func TestStoreContract(t *testing.T) {
	for _, parts := range []int{1, 4} {
		t.Run(map[int]string{1: "one", 4: "four"}[parts], func(t *testing.T) {
			storetest.Run(t, func(*testing.T) durable.Store {
				return memstore.New(memstore.Options{Partitions: parts})
			})
		})
	}
}
