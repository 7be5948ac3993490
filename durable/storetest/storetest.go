// Package storetest is the behavioural suite of durable's delivery contract:
// every Store runs it, and a store that passes it keeps the contract as
// package durable states it. Its tests come in three kinds: features through
// the Queue's public API; one subtest per Store method (Add, Claim, ...,
// Periodic: method_*.go), calling the store directly with table cases; and
// Model (modeltest.go), random sequences of every operation held to a
// trivially correct reference (model.go). Eventually is the one wait helper
// of the stores' tests and durable's.
//
// A store's tests call Run with a func that opens a fresh, empty store for
// one test (a new Redis namespace, a new database schema) and cleans it up
// when that test ends:
//
//	func TestStoreContract(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) durable.Store { ... })
//	}
//
// The suite assumes the store's clock is this machine's (a store on
// loopback), as "never early" is checked against the local clock.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Run runs the suite, each test on a store of its own from open.
func Run(t *testing.T, open func(t *testing.T) durable.Store) {
	for _, tc := range []struct {
		name string
		test func(t *testing.T, open func(t *testing.T) durable.Store)
	}{
		{"AddIsIdempotent", testAddIsIdempotent},
		{"BadInputStoresNothing", testBadInputStoresNothing},
		{"EdgeInputReadsBackAlike", testEdgeInputReadsBackAlike},
		{"NeverEarly", testNeverEarly},
		{"CancelIsFinal", testCancelIsFinal},
		{"CancelInFlightIsFinal", testCancelInFlightIsFinal},
		{"RetriesThenDeadThenRequeue", testRetriesThenDeadThenRequeue},
		{"VanishedWorkerTaskIsRedelivered", testVanishedWorkerTaskIsRedelivered},
		{"StaleTokenIsRejected", testStaleTokenIsRejected},
		{"LostClaimReplyCountsNoAttempt", testLostClaimReplyCountsNoAttempt},
		{"RescheduleAndReplace", testRescheduleAndReplace},
		{"ListAndStats", testListAndStats},
		{"DetachThenComplete", testDetachThenComplete},
		{"DetachDeadlinePasses", testDetachDeadlinePasses},
		{"DetachFail", testDetachFail},
		{"ResultIsKept", testResultIsKept},
		{"ResultIsTruncated", testResultIsTruncated},
		{"LastErrorClearedOnSuccess", testLastErrorClearedOnSuccess},
		{"StatsCountStates", testStatsCountStates},
		{"AddAndReplaceInOneGroupCommit", testAddAndReplaceInOneGroupCommit},
		{"RetryAfterZeroWaitsTheBackoff", testRetryAfterZeroWaitsTheBackoff},
		{"StoreRecordsRetryAtLastAttempt", testStoreRecordsRetryAtLastAttempt},
		{"StoreRecordsLaterPastMaxPostponements", testStoreRecordsLaterPastMaxPostponements},
		{"CompleteAtLastAttemptIsDead", testCompleteAtLastAttemptIsDead},
		{"ForgedTokenCannotChangeAttempts", testForgedTokenCannotChangeAttempts},
		{"Add", testMethodAdd},
		{"Claim", testMethodClaim},
		{"Extend", testMethodExtend},
		{"Settle", testMethodSettle},
		{"Cancel", testMethodCancel},
		{"Reschedule", testMethodReschedule},
		{"Requeue", testMethodRequeue},
		{"Get", testMethodGet},
		{"List", testMethodList},
		{"Dead", testMethodDead},
		{"Stats", testMethodStats},
		{"Pause", testMethodPause},
		{"Periodic", testMethodPeriodic},
		{"Model", testModel},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, open) })
	}
}

// newQueue is a Queue on st with opts; its Run's retried errors go to t.Log.
func newQueue(t *testing.T, st durable.Store, opts durable.Options) *durable.Queue {
	t.Helper()
	if opts.OnError == nil {
		opts.OnError = func(err error) { t.Log("OnError:", err) }
	}
	q, err := durable.New(st, opts)
	if err != nil {
		t.Fatalf("durable.New: %v", err)
	}
	return q
}

// run runs q.Run(h) until t ends or the returned stop is called; stop waits
// for Run to return, at most Patience.
func run(t *testing.T, q *durable.Queue, h durable.Handler) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx, h) }()
	stopped := false
	stop = func() {
		if stopped {
			return
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v", err)
			}
		case <-time.After(Patience):
			t.Errorf("Run did not return within %v of its context ending", Patience)
		}
	}
	t.Cleanup(stop)
	return stop
}

// await receives from ch, failing t if nothing comes within Patience.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(Patience):
		t.Fatalf("timed out after %v waiting for %s", Patience, what)
		panic("unreachable")
	}
}

// totals is q's Stats.Total with only the counts.
func totals(t *testing.T, q *durable.Queue) durable.ShardStats {
	t.Helper()
	st, err := q.Stats(context.Background())
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	s := st.Total
	s.Shard, s.OldestDue, s.Paused, s.States = 0, 0, false, durable.StateCounts{} // StatsCountStates checks States
	return s
}

// claimKey claims partitions of st, as a worker would, until key is leased
// for lease, and returns the delivery and its partition: the caller then
// holds it as a worker that may vanish.
func claimKey(t *testing.T, q *durable.Queue, st durable.Store, key string, lease time.Duration) (durable.ClaimedTask, int) {
	t.Helper()
	var got *durable.ClaimedTask
	part := -1
	Eventually(t, "a claim of "+key, func() bool {
		for p := range st.Partitions() {
			c, err := st.Claim(context.Background(), p, 1, lease, q.Limits())
			if err != nil {
				t.Fatalf("Claim partition %d: %v", p, err)
			}
			for _, ct := range c.Tasks {
				if ct.Key != key {
					t.Fatalf("claimed %q, want only %q", ct.Key, key)
				}
				got, part = &ct, p
			}
		}
		return got != nil
	})
	return *got, part
}
