package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// runUntil runs q with h until key is in state want, then stops the Run and
// returns what Get read.
func runUntil(t *testing.T, q *durable.Queue, h durable.Handler, key string, want durable.State) durable.TaskInfo {
	t.Helper()
	stop := run(t, q, h)
	var info durable.TaskInfo
	Eventually(t, fmt.Sprintf("%s %s", key, want), func() bool {
		var err error
		info, err = q.Get(context.Background(), key)
		return err == nil && info.State == want
	})
	stop()
	return info
}

// Results: each delivery's Result (SetResult) is kept in its history entry,
// on failure and on success, byte for byte (any bytes, not only text), and
// read back by Get.
func testResultIsKept(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{Retention: time.Hour, Backoff: func(int) time.Duration { return time.Millisecond }})
	ctx := context.Background()
	binary := []byte{0, 0xff, 0xfe, '"', '\\', '\n', 0xc3, 'x'} // not UTF-8, not JSON-safe
	h := func(ctx context.Context, tk durable.Task) error {
		if tk.Attempt == 1 {
			durable.SetResult(ctx, durable.Result{Code: 503, Body: []byte("busy")})
			return errors.New("busy")
		}
		durable.SetResult(ctx, durable.Result{Code: 1, Body: []byte("overwritten")})
		durable.SetResult(ctx, durable.Result{Code: 200, Body: binary}) // the last call wins
		return nil
	}
	if _, err := q.Add(ctx, "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	info := runUntil(t, q, h, "k", durable.StateDone)
	if len(info.History) != 2 {
		t.Fatalf("history %+v, want 2 deliveries", info.History)
	}
	for i, want := range []durable.Result{{Code: 503, Body: []byte("busy")}, {Code: 200, Body: binary}} {
		got := info.History[i].Result
		if got.Code != want.Code || !bytes.Equal(got.Body, want.Body) || got.Truncated {
			t.Errorf("delivery %d: result %+v, want %+v", i+1, got, want)
		}
	}
	if _, err := q.Add(ctx, "none", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	info = runUntil(t, q, func(context.Context, durable.Task) error { return nil }, "none", durable.StateDone)
	if len(info.History) != 1 || info.History[0].Result.Code != 0 || info.History[0].Result.Body != nil {
		t.Errorf("a delivery that set no result: history %+v, want one entry with the zero Result", info.History)
	}
}

// Results are bounded: a body longer than MaxResultBody is kept cut to it,
// with Truncated; one of exactly MaxResultBody is kept whole.
func testResultIsTruncated(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{Retention: time.Hour})
	ctx := context.Background()
	long := bytes.Repeat([]byte("0123456789abcdef"), durable.MaxResultBody/16+1)
	for _, c := range []struct {
		key       string
		body      []byte
		truncated bool
	}{
		{"long", long, true},
		{"exact", long[:durable.MaxResultBody], false},
	} {
		if _, err := q.Add(ctx, c.key, nil, time.Now()); err != nil {
			t.Fatal(err)
		}
		info := runUntil(t, q, func(ctx context.Context, _ durable.Task) error {
			durable.SetResult(ctx, durable.Result{Code: 200, Body: c.body})
			return nil
		}, c.key, durable.StateDone)
		if len(info.History) != 1 {
			t.Fatalf("%s: history %+v", c.key, info.History)
		}
		got := info.History[0].Result
		if len(got.Body) != durable.MaxResultBody || !bytes.Equal(got.Body, long[:durable.MaxResultBody]) || got.Truncated != c.truncated {
			t.Errorf("%s: body of %d bytes, truncated %v; want the first %d bytes, truncated %v",
				c.key, len(got.Body), got.Truncated, durable.MaxResultBody, c.truncated)
		}
	}
}

// The last error is the last failure's until the task succeeds: a task done
// after failures (retried, or dead and requeued) has none, while its history
// keeps each attempt's error.
func testLastErrorClearedOnSuccess(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{Retention: time.Hour, MaxAttempts: 1})
	ctx := context.Background()
	if _, err := q.Add(ctx, "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	runUntil(t, q, func(context.Context, durable.Task) error { return errors.New("first failed") }, "k", durable.StateDead)
	if ok, err := q.Requeue(ctx, "k"); err != nil || !ok {
		t.Fatalf("Requeue: %v, %v", ok, err)
	}
	info, err := q.Get(ctx, "k")
	if err != nil || info.State != durable.StateRetrying || info.LastError != "first failed" {
		t.Fatalf("requeued: %+v, %v (want retrying with the last error)", info, err)
	}
	info = runUntil(t, q, func(context.Context, durable.Task) error { return nil }, "k", durable.StateDone)
	if info.LastError != "" {
		t.Errorf("done after a failure: last error %q, want none", info.LastError)
	}
	if len(info.History) != 2 || info.History[0].Error != "first failed" || info.History[1].Outcome != "done" {
		t.Errorf("history %+v, want the failure then done", info.History)
	}
}
