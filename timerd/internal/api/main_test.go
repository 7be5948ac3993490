package api

import (
	"testing"

	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"go.uber.org/goleak"
)

// The tests run against real Redis, standalone and cluster, found by
// package redistest; each works in a namespace of its own.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(redistest.HoldRedisLog(m), redistest.IgnoreTryDial)
}
