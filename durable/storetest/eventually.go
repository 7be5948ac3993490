package storetest

import (
	"testing"
	"time"
)

// Patience bounds every wait of a test on something that should happen soon
// (a delivery, a reap, a callback): long enough that a loaded machine never
// trips it, finite so that a broken store or feature fails the test with a
// message instead of hanging it. It is a bound on failure, never a
// measurement: no test asserts that anything happened within less.
const Patience = 30 * time.Second

// Eventually polls cond every 10 ms until it holds, failing t (Fatalf, with
// what) once Patience has passed. It is the one such helper of the stores'
// and durable's tests.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	EventuallyWithin(t, Patience, what, cond)
}

// EventuallyWithin is Eventually with its own bound, for a wait whose work
// grows with the test (a backlog of thousands of tasks).
func EventuallyWithin(t testing.TB, bound time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(bound)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", bound, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
