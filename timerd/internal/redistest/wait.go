package redistest

import (
	"testing"
	"time"
)

// WaitBound is how long Within and the tests' polling helpers wait for an
// event: generous for a loaded 2-core machine, and short of go test's
// -timeout, so that a wait that never ends fails its test with a message
// instead of hanging the run.
const WaitBound = time.Minute

// Within runs wait (a WaitGroup's Wait, a receive of a goroutine's result)
// and fails tb, naming what it waited for, if wait has not returned within
// WaitBound. The goroutine running wait is then left behind: the test has
// failed already.
func Within(tb testing.TB, what string, wait func()) {
	tb.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		wait()
	}()
	select {
	case <-done:
	case <-time.After(WaitBound):
		tb.Errorf("waited %v for %s", WaitBound, what)
	}
}
