package timingwheel

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run if any goroutine outlives the tests: a poller of a
// stopped wheel, a pool worker, a callback goroutine still blocked.
//
// The default wheel is never stopped, so its poller is the one goroutine
// allowed to remain. It is started here and ignored by identity
// (IgnoreCurrent), not by name: ignoring every goroutine in
// (*TimingWheel).poll would also hide the poller of a wheel a test forgot,
// or failed, to stop.
func TestMain(m *testing.M) {
	Default()
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent())
}
