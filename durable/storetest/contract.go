package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Idempotent add: a key that exists, in any state, makes Add (and AddAfter,
// AddBatch) return false and change nothing.
func testAddIsIdempotent(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{})
	ctx := context.Background()
	at := time.UnixMilli(time.Now().Add(time.Hour).UnixMilli()) // whole ms: Due reads back equal
	added, err := q.Add(ctx, "k", []byte("first"), at)
	if err != nil || !added {
		t.Fatalf("first Add: %v, %v", added, err)
	}
	added, err = q.Add(ctx, "k", []byte("second"), at.Add(time.Hour))
	if err != nil || added {
		t.Fatalf("second Add: %v, %v (want false, nil)", added, err)
	}
	added, err = q.AddAfter(ctx, "k", []byte("third"), time.Minute)
	if err != nil || added {
		t.Fatalf("AddAfter of an existing key: %v, %v (want false, nil)", added, err)
	}
	res, err := q.AddBatch(ctx, []durable.Item{{Key: "k", At: at}, {Key: "b", At: at}, {Key: "b", At: at}})
	if err != nil || fmt.Sprint(res) != "[false true false]" {
		t.Fatalf("AddBatch: %v, %v (want [false true false])", res, err)
	}
	info, err := q.Get(ctx, "k")
	if err != nil {
		t.Fatal(err)
	}
	if info.State != durable.StateScheduled || info.PayloadSize != len("first") || !info.Due.Equal(at) {
		t.Errorf("Get after refused Adds: %+v (want the first Add's task)", info)
	}
	if got := totals(t, q); got != (durable.ShardStats{Scheduled: 2}) {
		t.Errorf("Stats: %+v, want 2 scheduled", got)
	}
}

// Never early: a handler never starts before its task's time, and Task.Due
// is that time.
func testNeverEarly(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{})
	ctx := context.Background()
	type start struct {
		task durable.Task
		at   time.Time
	}
	started := make(chan start, 20)
	run(t, q, func(_ context.Context, tk durable.Task) error {
		started <- start{tk, time.Now()}
		return nil
	})
	due := map[string]time.Time{}
	base := time.Now()
	for i := range 10 {
		key := fmt.Sprint("k", i)
		due[key] = base.Add(time.Duration(50+30*i) * time.Millisecond)
		if _, err := q.Add(ctx, key, nil, due[key]); err != nil {
			t.Fatal(err)
		}
	}
	added := time.Now()
	if _, err := q.AddAfter(ctx, "after", nil, 200*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	for range 11 {
		s := await(t, started, "a delivery")
		want, ok := due[s.task.Key]
		if !ok {
			want = added.Add(200 * time.Millisecond)
		}
		if s.at.Before(want) {
			t.Errorf("%s started at %v, before its time %v", s.task.Key, s.at, want)
		}
		if ok && s.task.Due.Before(want.Truncate(time.Millisecond)) {
			t.Errorf("%s: Task.Due %v is before its time %v", s.task.Key, s.task.Due, want)
		}
	}
}

// Final cancel: a cancelled task is never delivered, and its key is free
// for a new task.
func testCancelIsFinal(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{})
	ctx := context.Background()
	if _, err := q.AddAfter(ctx, "k", []byte("old"), 100*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	ok, err := q.Cancel(ctx, "k")
	if err != nil || !ok {
		t.Fatalf("Cancel: %v, %v", ok, err)
	}
	if ok, err = q.Cancel(ctx, "k"); err != nil || ok {
		t.Fatalf("second Cancel: %v, %v (want false)", ok, err)
	}
	if _, err := q.Get(ctx, "k"); !errors.Is(err, durable.ErrNotFound) {
		t.Fatalf("Get after Cancel: %v, want ErrNotFound", err)
	}
	fired := make(chan durable.Task, 4)
	run(t, q, func(_ context.Context, tk durable.Task) error {
		fired <- tk
		return nil
	})
	added, err := q.AddAfter(ctx, "k", []byte("new"), 300*time.Millisecond)
	if err != nil || !added {
		t.Fatalf("Add after Cancel: %v, %v (want a new task)", added, err)
	}
	if tk := await(t, fired, "the new task"); string(tk.Payload) != "new" {
		t.Errorf("delivered %q, want the new task's payload", tk.Payload)
	}
	select {
	case tk := <-fired:
		t.Errorf("delivered again: %+v", tk)
	case <-time.After(500 * time.Millisecond):
	}
}

// Final cancel of a task in flight: its handler's context is cancelled with
// ErrCanceled, and whatever it returns the task is not retried.
func testCancelInFlightIsFinal(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{Lease: durable.MinLease * 3})
	ctx := context.Background()
	running := make(chan struct{}, 1)
	causes := make(chan error, 4)
	var calls sync.WaitGroup
	run(t, q, func(hctx context.Context, _ durable.Task) error {
		calls.Add(1)
		defer calls.Done()
		running <- struct{}{}
		<-hctx.Done()
		causes <- context.Cause(hctx)
		return errors.New("failed after cancel")
	})
	if _, err := q.Add(ctx, "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	await(t, running, "the delivery")
	ok, err := q.Cancel(ctx, "k")
	if err != nil || !ok {
		t.Fatalf("Cancel in flight: %v, %v", ok, err)
	}
	if cause := await(t, causes, "the handler's context cancelled"); !errors.Is(cause, durable.ErrCanceled) {
		t.Errorf("cause %v, want ErrCanceled", cause)
	}
	Eventually(t, "the task gone", func() bool {
		_, err := q.Get(ctx, "k")
		return errors.Is(err, durable.ErrNotFound)
	})
	select {
	case <-running:
		t.Error("a cancelled task was delivered again")
	case <-time.After(500 * time.Millisecond):
	}
}

// At least once and bounded: a failing task is delivered again, its attempt
// counted, until MaxAttempts; then it is dead with its last error, and
// Requeue brings it back.
func testRetriesThenDeadThenRequeue(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{MaxAttempts: 3, Backoff: func(int) time.Duration { return 10 * time.Millisecond }})
	ctx := context.Background()
	attempts := make(chan int, 10)
	succeed := make(chan struct{})
	run(t, q, func(_ context.Context, tk durable.Task) error {
		attempts <- tk.Attempt
		select {
		case <-succeed:
			return nil
		default:
			return fmt.Errorf("attempt %d failed", tk.Attempt)
		}
	})
	if _, err := q.Add(ctx, "k", []byte("p"), time.Now()); err != nil {
		t.Fatal(err)
	}
	for want := 1; want <= 3; want++ {
		if got := await(t, attempts, fmt.Sprint("attempt ", want)); got != want {
			t.Fatalf("attempt %d, want %d", got, want)
		}
	}
	var dead []durable.DeadTask
	Eventually(t, "the task dead", func() bool {
		var err error
		dead, err = q.Dead(ctx, 10)
		return err == nil && len(dead) == 1
	})
	if d := dead[0]; d.Key != "k" || d.Attempts != 3 || d.LastError != "attempt 3 failed" || string(d.Payload) != "p" {
		t.Errorf("dead task %+v", d)
	}
	close(succeed)
	ok, err := q.Requeue(ctx, "k")
	if err != nil || !ok {
		t.Fatalf("Requeue: %v, %v", ok, err)
	}
	if got := await(t, attempts, "the requeued delivery"); got != 1 {
		t.Errorf("requeued delivery's attempt %d, want 1 (attempts reset)", got)
	}
	Eventually(t, "the task done", func() bool { return totals(t, q) == durable.ShardStats{} })
}

// At least once: a task claimed by a worker that vanishes (no heartbeat, no
// settle) is delivered again once its lease runs out, to another worker.
func testVanishedWorkerTaskIsRedelivered(t *testing.T, open func(t *testing.T) durable.Store) {
	st := open(t)
	q := newQueue(t, st, durable.Options{})
	ctx := context.Background()
	if _, err := q.Add(ctx, "k", []byte("p"), time.Now()); err != nil {
		t.Fatal(err)
	}
	lease := durable.MinLease
	ct, p := claimKey(t, q, st, "k", lease)
	claimedAt := time.Now()
	if ct.Attempt != 1 || string(ct.Payload) != "p" {
		t.Fatalf("claimed %+v", ct)
	}
	// The vanished worker confirms its delivery once, as its first heartbeat
	// would, so that the lost lease counts the attempt.
	codes, err := st.Extend(ctx, p, lease, []durable.Lease{{Key: ct.Key, Token: ct.Token}})
	if err != nil || len(codes) != 1 || codes[0] != durable.ExtendOK {
		t.Fatalf("Extend: %v, %v", codes, err)
	}
	fired := make(chan durable.Task, 2)
	run(t, q, func(_ context.Context, tk durable.Task) error {
		fired <- tk
		return nil
	})
	tk := await(t, fired, "the redelivery after the lease")
	if time.Since(claimedAt) < lease {
		t.Errorf("redelivered %v after the claim, before its lease of %v ran out", time.Since(claimedAt), lease)
	}
	if tk.Attempt != 2 {
		t.Errorf("redelivery's attempt %d, want 2", tk.Attempt)
	}
}

// Fencing: once a task was claimed again, the old delivery's token is
// rejected by Settle and Extend, and changes nothing.
func testStaleTokenIsRejected(t *testing.T, open func(t *testing.T) durable.Store) {
	st := open(t)
	q := newQueue(t, st, durable.Options{})
	ctx := context.Background()
	if _, err := q.Add(ctx, "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	old, p := claimKey(t, q, st, "k", durable.MinLease)
	cur, p2 := claimKey(t, q, st, "k", time.Hour) // after the old lease ran out
	if p2 != p || cur.Token == old.Token {
		t.Fatalf("second claim: partition %d token %q, first: partition %d token %q", p2, cur.Token, p, old.Token)
	}
	s, err := st.Settle(ctx, p, q.Limits(), []durable.Outcome{{Key: "k", Token: old.Token, Kind: durable.OutcomeDone}})
	if err != nil || len(s.Codes) != 1 || s.Codes[0] != durable.SettleRejected {
		t.Fatalf("Settle with the stale token: %+v, %v (want rejected)", s, err)
	}
	codes, err := st.Extend(ctx, p, time.Hour, []durable.Lease{{Key: "k", Token: old.Token}})
	if err != nil || len(codes) != 1 || codes[0] != durable.ExtendLost {
		t.Fatalf("Extend with the stale token: %v, %v (want lost)", codes, err)
	}
	info, err := q.Get(ctx, "k")
	if err != nil || info.State != durable.StateInFlight {
		t.Fatalf("after the stale calls: %+v, %v (want in flight)", info, err)
	}
	s, err = st.Settle(ctx, p, q.Limits(), []durable.Outcome{{Key: "k", Token: cur.Token, Kind: durable.OutcomeDone}})
	if err != nil || len(s.Codes) != 1 || s.Codes[0] != durable.SettleDone {
		t.Fatalf("Settle with the current token: %+v, %v (want done)", s, err)
	}
	if got := totals(t, q); got != (durable.ShardStats{}) {
		t.Errorf("Stats after done: %+v", got)
	}
}

// Lost claim replies: a claim whose delivery was never confirmed (no
// heartbeat, no settle: maybe its reply was lost) does not count an
// attempt, so a task with MaxAttempts 1 still gets its one delivery.
func testLostClaimReplyCountsNoAttempt(t *testing.T, open func(t *testing.T) durable.Store) {
	st := open(t)
	q := newQueue(t, st, durable.Options{MaxAttempts: 1})
	ctx := context.Background()
	if _, err := q.Add(ctx, "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	claimKey(t, q, st, "k", durable.MinLease) // the reply "lost": nobody runs it
	fired := make(chan durable.Task, 2)
	run(t, q, func(_ context.Context, tk durable.Task) error {
		fired <- tk
		return nil
	})
	tk := await(t, fired, "the delivery after the lost claim")
	if tk.Attempt != 1 {
		t.Errorf("attempt %d after a lost claim reply, want 1", tk.Attempt)
	}
	Eventually(t, "the task done", func() bool { return totals(t, q) == durable.ShardStats{} })
	if dead, err := q.Dead(ctx, 10); err != nil || len(dead) != 0 {
		t.Errorf("dead tasks %+v, %v: the lost claim counted an attempt", dead, err)
	}
}

// Reschedule moves a scheduled task, keeping its original due time; Replace
// rewrites one, original due time included; neither touches a task in
// flight (ErrInFlight).
func testRescheduleAndReplace(t *testing.T, open func(t *testing.T) durable.Store) {
	st := open(t)
	q := newQueue(t, st, durable.Options{})
	ctx := context.Background()
	at := time.UnixMilli(time.Now().Add(time.Hour).UnixMilli())
	if _, err := q.Add(ctx, "k", []byte("p"), at); err != nil {
		t.Fatal(err)
	}
	later := at.Add(time.Hour)
	if ok, err := q.Reschedule(ctx, "k", later); err != nil || !ok {
		t.Fatalf("Reschedule: %v, %v", ok, err)
	}
	if ok, err := q.Reschedule(ctx, "missing", later); err != nil || ok {
		t.Fatalf("Reschedule of a missing key: %v, %v (want false)", ok, err)
	}
	// The original due time is Add's: Reschedule moves only the due time.
	info, err := q.Get(ctx, "k")
	if err != nil || !info.Due.Equal(later) || !info.OriginalDue.Equal(at) {
		t.Fatalf("after Reschedule: %+v, %v (want due %v, originally %v)", info, err, later, at)
	}
	// Replace starts over: its time is the original due time.
	replaced := time.UnixMilli(time.Now().UnixMilli())
	if err := q.Replace(ctx, "k", []byte("new payload"), replaced); err != nil {
		t.Fatal(err)
	}
	info, err = q.Get(ctx, "k")
	if err != nil || info.PayloadSize != len("new payload") || !info.OriginalDue.Equal(replaced) {
		t.Fatalf("after Replace: %+v, %v (want originally due %v)", info, err, replaced)
	}
	if ok, err := q.Reschedule(ctx, "k", replaced.Add(-time.Second)); err != nil || !ok {
		t.Fatalf("second Reschedule: %v, %v", ok, err)
	}
	if ct, _ := claimKey(t, q, st, "k", time.Hour); ct.OriginalDue != replaced.UnixMilli() {
		t.Errorf("claimed with original due %d, want Replace's %d", ct.OriginalDue, replaced.UnixMilli())
	}
	if err := q.Replace(ctx, "k", nil, time.Now()); !errors.Is(err, durable.ErrInFlight) {
		t.Errorf("Replace in flight: %v, want ErrInFlight", err)
	}
	if _, err := q.Reschedule(ctx, "k", time.Now()); !errors.Is(err, durable.ErrInFlight) {
		t.Errorf("Reschedule in flight: %v, want ErrInFlight", err)
	}
}

// List pages through a state in time order, each task once; Stats counts.
func testListAndStats(t *testing.T, open func(t *testing.T) durable.Store) {
	q := newQueue(t, open(t), durable.Options{})
	ctx := context.Background()
	base := time.UnixMilli(time.Now().Add(time.Hour).UnixMilli())
	var items []durable.Item
	for i := range 25 {
		// Five keys share each time, so ties are ordered by key.
		items = append(items, durable.Item{Key: fmt.Sprintf("k%02d", 24-i), At: base.Add(time.Duration(i/5) * time.Second)})
	}
	if _, err := q.AddBatch(ctx, items); err != nil {
		t.Fatal(err)
	}
	var got []durable.TaskInfo
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatal("List never ended")
		}
		page, next, err := q.List(ctx, durable.StateScheduled, cursor, 7)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, page...)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(got) != 25 {
		t.Fatalf("listed %d tasks, want 25", len(got))
	}
	for i := 1; i < len(got); i++ {
		a, b := got[i-1], got[i]
		if a.Due.After(b.Due) || a.Due.Equal(b.Due) && a.Key >= b.Key {
			t.Errorf("listed %s (%v) before %s (%v): not in (time, key) order", a.Key, a.Due, b.Key, b.Due)
		}
	}
	if got := totals(t, q); got != (durable.ShardStats{Scheduled: 25}) {
		t.Errorf("Stats: %+v, want 25 scheduled", got)
	}
}
