package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Asynchronous completion (durable's detach.go): a handler that returns
// Detach leaves its delivery in flight, without its handler slot, until
// Complete with the delivery's token, or until the deadline passes.

// detachRun runs q with Concurrency 1 and a handler that sends each delivery
// to the returned channel and answers what reply says for it.
func detachRun(t *testing.T, q *durable.Queue, reply func(durable.Task) error) <-chan durable.Task {
	t.Helper()
	seen := make(chan durable.Task, 16)
	run(t, q, func(_ context.Context, tk durable.Task) error {
		seen <- tk
		return reply(tk)
	})
	return seen
}

// A detached delivery frees its handler (a second task runs with
// Concurrency 1), stays in flight with its lease at the deadline, refuses a
// stale or malformed token without change, and is done once completed.
func testDetachThenComplete(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{Concurrency: 1})
	ctx := context.Background()
	seen := detachRun(t, q, func(tk durable.Task) error {
		if tk.Key == "a" {
			return durable.Detach(time.Hour)
		}
		return nil
	})
	detachedAt := time.Now()
	if _, err := q.Add(ctx, "a", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	a := await(t, seen, "the delivery of a")
	if a.Token == "" {
		t.Fatal("the delivery has no Token")
	}
	if _, err := q.Add(ctx, "b", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if b := await(t, seen, "the delivery of b while a is detached (its handler slot freed)"); b.Key != "b" {
		t.Fatalf("delivered %q, want b", b.Key)
	}
	Eventually(t, "a in flight until its deadline", func() bool {
		info, err := q.Get(ctx, "a")
		// Due is the lease's end: Extend moved it about an hour on, far past
		// any heartbeat's Lease (30s by default).
		return err == nil && info.State == durable.StateInFlight && info.Due.After(detachedAt.Add(50*time.Minute))
	})

	stale := a.Token + "9" // a store token that is not the current one
	for _, c := range []struct {
		key, token string
		want       error
	}{
		{"a", stale, durable.ErrStaleToken},
		{"b", a.Token, durable.ErrStaleToken}, // another key's token
		{"a", "no-dots", durable.ErrToken},
		{"a", "99999.1.0.0.7", durable.ErrToken}, // no such partition
		{"a", "0.-1.0.0.7", durable.ErrToken},
	} {
		if code, err := q.Complete(ctx, c.key, c.token, nil); !errors.Is(err, c.want) || code != durable.SettleRejected {
			t.Errorf("Complete(%q, %q): %v, %v, want %v", c.key, c.token, code, err, c.want)
		}
	}
	if info, err := q.Get(ctx, "a"); err != nil || info.State != durable.StateInFlight || info.LastError != "" {
		t.Fatalf("after the refused completions: %+v, %v (want in flight, unchanged)", info, err)
	}

	code, err := q.Complete(ctx, "a", a.Token, nil)
	if err != nil || code != durable.SettleDone {
		t.Fatalf("Complete: %v, %v, want done", code, err)
	}
	// b's settle is batched by its worker and may land after this: wait
	// for it rather than read Stats once.
	Eventually(t, "nothing left after a's Complete and b's settle", func() bool {
		return totals(t, q) == (durable.ShardStats{})
	})
	if code, err := q.Complete(ctx, "a", a.Token, nil); !errors.Is(err, durable.ErrStaleToken) {
		t.Errorf("Complete again: %v, %v, want ErrStaleToken", code, err)
	}
}

// A detached delivery whose deadline passes is reaped and delivered again,
// its attempt counted, with a new token; the old token is then refused.
func testDetachDeadlinePasses(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{Concurrency: 1, PollInterval: 50 * time.Millisecond})
	ctx := context.Background()
	seen := detachRun(t, q, func(tk durable.Task) error {
		if tk.Attempt == 1 {
			return durable.Detach(200 * time.Millisecond)
		}
		return durable.Detach(time.Hour)
	})
	if _, err := q.Add(ctx, "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	first := await(t, seen, "the first delivery")
	second := await(t, seen, "the delivery after the deadline")
	if second.Attempt != 2 || second.Token == first.Token {
		t.Fatalf("second delivery: attempt %d token %q, first token %q (want attempt 2, a new token)", second.Attempt, second.Token, first.Token)
	}
	if _, err := q.Complete(ctx, "k", first.Token, nil); !errors.Is(err, durable.ErrStaleToken) {
		t.Errorf("Complete with the first delivery's token: %v, want ErrStaleToken", err)
	}
	info, err := q.Get(ctx, "k")
	if err != nil || info.State != durable.StateInFlight || info.Attempts != 2 || info.LastError != "lease expired" {
		t.Fatalf("after the deadline: %+v, %v (want in flight, 2 attempts, lease expired)", info, err)
	}
	if code, err := q.Complete(ctx, "k", second.Token, nil); err != nil || code != durable.SettleDone {
		t.Fatalf("Complete with the current token: %v, %v", code, err)
	}
}

// Complete with an error retries the task after the worker's backoff, the
// attempt counted and the error its last; with Permanent it is dead; after
// Cancel it is finished as cancelled.
func testDetachFail(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{Concurrency: 1, MaxAttempts: 5, Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
	ctx := context.Background()
	seen := detachRun(t, q, func(durable.Task) error { return durable.Detach(time.Hour) })
	if _, err := q.Add(ctx, "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	first := await(t, seen, "the first delivery")
	if code, err := q.Complete(ctx, "k", first.Token, errors.New("receiver failed")); err != nil || code != durable.SettleRetry {
		t.Fatalf("Complete with an error: %v, %v, want retry", code, err)
	}
	second := await(t, seen, "the retry")
	if second.Attempt != 2 {
		t.Errorf("retry's attempt %d, want 2", second.Attempt)
	}
	if info, err := q.Get(ctx, "k"); err != nil || info.LastError != "receiver failed" {
		t.Errorf("after the failure: %+v, %v (want last error \"receiver failed\")", info, err)
	}
	if code, err := q.Complete(ctx, "k", second.Token, durable.Permanent(errors.New("bad order"))); err != nil || code != durable.SettleDead {
		t.Fatalf("Complete with Permanent: %v, %v, want dead", code, err)
	}
	dead, err := q.Dead(ctx, 10)
	if err != nil || len(dead) != 1 || dead[0].Key != "k" || dead[0].Attempts != 2 || dead[0].LastError != "bad order" {
		t.Fatalf("dead set: %+v, %v", dead, err)
	}

	if _, err := q.Add(ctx, "c", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	c := await(t, seen, "the delivery of c")
	Eventually(t, "c detached", func() bool {
		info, err := q.Get(ctx, "c")
		return err == nil && info.Due.After(time.Now().Add(50*time.Minute))
	})
	if ok, err := q.Cancel(ctx, "c"); err != nil || !ok {
		t.Fatalf("Cancel: %v, %v", ok, err)
	}
	if code, err := q.Complete(ctx, "c", c.Token, nil); err != nil || code != durable.SettleCancelled {
		t.Fatalf("Complete after Cancel: %v, %v, want cancelled", code, err)
	}
}
