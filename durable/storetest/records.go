package storetest

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// The Queue decides, the store records: a Store applies each outcome as its
// Kind says, whatever the task's attempts or postponements (durable's state
// table), and the Queue alone turns a retry out of attempts into a death and
// a postponement past MaxPostponements into a counted retry, for Run and
// Complete alike.

// settleOne settles one outcome, of partition p, directly on st and returns
// its code.
func settleOne(t *testing.T, q *durable.Queue, st durable.Store, p int, o durable.Outcome) durable.SettleCode {
	t.Helper()
	s, err := st.Settle(context.Background(), p, q.Limits(), []durable.Outcome{o})
	if err != nil || len(s.Codes) != 1 {
		t.Fatalf("Settle %+v: %+v, %v", o, s, err)
	}
	return s.Codes[0]
}

// A Retry of a task at its last attempt is recorded as a retry: due again
// after its delay, not dead. The Queue sends Dead when it means dead.
func testStoreRecordsRetryAtLastAttempt(t *testing.T, open func(t *testing.T) durable.Store) {
	st := open(t)
	q := newQueue(t, st, durable.Options{MaxAttempts: 1})
	ctx := context.Background()
	if _, err := q.Add(ctx, "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	ct, p := claimKey(t, q, st, "k", time.Hour)
	if ct.Attempt != 1 {
		t.Fatalf("claimed attempt %d, want 1", ct.Attempt)
	}
	settledAt := time.Now()
	code := settleOne(t, q, st, p, durable.Outcome{Key: "k", Token: ct.Token, Kind: durable.OutcomeRetry, Delay: time.Hour.Milliseconds(), Err: "failed"})
	if code != durable.SettleRetry {
		t.Fatalf("Settle of a retry at the last attempt: code %d, want SettleRetry (%d): the store decided", code, durable.SettleRetry)
	}
	info, err := q.Get(ctx, "k")
	if err != nil || info.State != durable.StateRetrying || info.Attempts != 1 || info.LastError != "failed" ||
		info.Due.Before(settledAt.Add(50*time.Minute)) {
		t.Fatalf("after the retry: %+v, %v (want retrying, 1 attempt, due in an hour)", info, err)
	}
}

// A Later is recorded as a postponement (its attempt not counted, its count
// of postponements one more) however many came before, MaxPostponements
// and past; Claim and Get report the count, and a Retry starts it over.
func testStoreRecordsLaterPastMaxPostponements(t *testing.T, open func(t *testing.T) durable.Store) {
	st := open(t)
	q := newQueue(t, st, durable.Options{MaxAttempts: 1})
	ctx := context.Background()
	if _, err := q.Add(ctx, "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	postpone(t, q, st, "k", durable.MaxPostponements+1)
	info, err := q.Get(ctx, "k")
	if err != nil || info.State != durable.StateRetrying || info.Attempts != 0 || info.Postponements != durable.MaxPostponements+1 {
		t.Fatalf("after %d laters: %+v, %v (want retrying, 0 attempts, %d postponements)",
			durable.MaxPostponements+1, info, err, durable.MaxPostponements+1)
	}
	ct, p := claimKey(t, q, st, "k", time.Hour)
	if ct.Attempt != 1 || ct.Postponements != durable.MaxPostponements+1 {
		t.Fatalf("claimed %+v, want attempt 1 after %d postponements", ct, durable.MaxPostponements+1)
	}
	if code := settleOne(t, q, st, p, durable.Outcome{Key: "k", Token: ct.Token, Kind: durable.OutcomeRetry, Err: "failed"}); code != durable.SettleRetry {
		t.Fatalf("Settle of a retry: code %d, want SettleRetry", code)
	}
	ct, _ = claimKey(t, q, st, "k", time.Hour)
	if ct.Attempt != 2 || ct.Postponements != 0 {
		t.Fatalf("claimed after a retry %+v, want attempt 2, postponements started over", ct)
	}
}

// postpone claims key and settles it OutcomeLater, due again at once, n
// times, checking that each is recorded as a postponement and that Claim
// counts them.
func postpone(t *testing.T, q *durable.Queue, st durable.Store, key string, n int) {
	t.Helper()
	for i := range n {
		ct, p := claimKey(t, q, st, key, time.Hour)
		if ct.Postponements != i {
			t.Fatalf("claim after %d laters reports %d postponements", i, ct.Postponements)
		}
		code := settleOne(t, q, st, p, durable.Outcome{Key: key, Token: ct.Token, Kind: durable.OutcomeLater, Err: "not now"})
		if code != durable.SettlePostponed {
			t.Fatalf("Settle of later %d: code %d, want SettlePostponed (%d): the store decided", i+1, code, durable.SettlePostponed)
		}
	}
}

// Complete decides as Run does, from what Get reads of the delivery: a
// plain error at the task's last attempt (its own MaxAttempts, else the
// Queue's) makes it dead; a RetryAfter past MaxPostponements counts the
// attempt, here the last: dead too.
func testCompleteAtLastAttemptIsDead(t *testing.T, open func(t *testing.T) durable.Store) {
	st := open(t)
	q := newQueue(t, st, durable.Options{Concurrency: 1, MaxAttempts: 1})
	ctx := context.Background()
	if _, err := q.Add(ctx, "own", nil, time.Now().Add(time.Hour), durable.TaskMaxAttempts(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Add(ctx, "later", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	postpone(t, q, st, "later", durable.MaxPostponements)
	seen := detachRun(t, q, func(durable.Task) error { return durable.Detach(time.Hour) })
	if _, err := q.Add(ctx, "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	if _, err := q.Reschedule(ctx, "own", time.Now()); err != nil {
		t.Fatal(err)
	}
	tasks := map[string]durable.Task{}
	for range 3 {
		tk := await(t, seen, "a detached delivery")
		tasks[tk.Key] = tk
	}
	for _, c := range []struct {
		key    string
		result error
		want   durable.SettleCode
	}{
		{"k", errors.New("receiver failed"), durable.SettleDead},
		{"own", errors.New("receiver failed"), durable.SettleRetry}, // its own MaxAttempts, 2
		{"later", durable.RetryAfter(time.Minute), durable.SettleDead},
	} {
		if code, err := q.Complete(ctx, c.key, tasks[c.key].Token, c.result); err != nil || code != c.want {
			t.Errorf("Complete(%q, %v) at attempt %d: %v, %v, want code %d", c.key, c.result, tasks[c.key].Attempt, code, err, c.want)
		}
	}
	own := await(t, seen, "own's second delivery")
	if code, err := q.Complete(ctx, "own", own.Token, errors.New("receiver failed")); err != nil || code != durable.SettleDead {
		t.Errorf("Complete(own) at attempt %d: %v, %v, want dead", own.Attempt, code, err)
	}
}

// A completion token carries only what names the delivery: a token forged
// with another attempt or backoff (the form before the token was cut to
// "<partition>.<store token>") neither moves the retry nor changes the
// attempt count; the Queue reads both from the store. A store token is the
// last field of either form.
func testForgedTokenCannotChangeAttempts(t *testing.T, open func(t *testing.T) durable.Store) {
	const backoffStep = 10 * time.Millisecond
	q := newQueue(t, open(t), durable.Options{Concurrency: 1, MaxAttempts: 5,
		Backoff: func(attempt int) time.Duration { return time.Duration(attempt) * backoffStep }})
	ctx := context.Background()
	seen := detachRun(t, q, func(durable.Task) error { return durable.Detach(time.Hour) })
	if _, err := q.Add(ctx, "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	twentyDays := strconv.FormatInt((20 * 24 * time.Hour).Milliseconds(), 10)
	cur := await(t, seen, "the first delivery")
	for _, forge := range []struct {
		what   string
		fields string // between the partition and the store token
	}{
		{"an attempt of 1e9 (Backoff(1e9) is 116 days)", ".1000000000.0.0."},
		{"a backoff of its own of 20 days", ".1." + twentyDays + "." + twentyDays + "."},
	} {
		dot, last := strings.IndexByte(cur.Token, '.'), strings.LastIndexByte(cur.Token, '.')
		forged := cur.Token[:dot] + forge.fields + cur.Token[last+1:]
		code, err := q.Complete(ctx, "k", forged, errors.New("receiver failed"))
		if errors.Is(err, durable.ErrToken) {
			continue // refused, nothing changed
		}
		if err != nil || code != durable.SettleRetry {
			t.Fatalf("Complete with %s, %q: %v, %v, want retry or ErrToken", forge.what, forged, code, err)
		}
		info, err := q.Get(ctx, "k")
		if err != nil || info.Attempts != cur.Attempt || info.Due.After(time.Now().Add(time.Minute)) {
			t.Fatalf("after Complete with %s: %+v, %v (want %d attempts, due after the Queue's backoff)", forge.what, info, err, cur.Attempt)
		}
		next := await(t, seen, "the retry")
		if next.Attempt != cur.Attempt+1 {
			t.Fatalf("retry's attempt %d, want %d", next.Attempt, cur.Attempt+1)
		}
		cur = next
	}
	if code, err := q.Complete(ctx, "k", cur.Token, nil); err != nil || code != durable.SettleDone {
		t.Fatalf("Complete with the real token: %v, %v", code, err)
	}
}
