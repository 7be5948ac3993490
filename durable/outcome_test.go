package durable

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// outcomeOf maps a handler's result, the delivery's attempt and
// postponements and the task's own policy to the outcome the store records.
func TestOutcomeOf(t *testing.T) {
	q := stubQueue(t, Options{MaxAttempts: 3, Backoff: func(a int) time.Duration { return time.Duration(a) * time.Second }})
	r := &runner{q: q, work: context.Background()}
	boom := errors.New("boom")
	cases := []struct {
		name    string
		attempt int
		later   int // postponements before
		policy  Policy
		err     error
		kind    OutcomeKind
		delay   int64
	}{
		{"success", 1, 0, Policy{}, nil, OutcomeDone, 0},
		{"success on the last attempt", 3, 0, Policy{}, nil, OutcomeDone, 0},
		{"failure", 2, 0, Policy{}, boom, OutcomeRetry, 2000},
		{"failure on the last attempt", 3, 0, Policy{}, boom, OutcomeDead, 0},
		{"permanent", 1, 0, Policy{}, Permanent(boom), OutcomeDead, 0},
		{"retry after", 1, 0, Policy{}, RetryAfter(1500 * time.Millisecond), OutcomeLater, 1500},
		{"retry after, wrapped", 2, 0, Policy{}, fmt.Errorf("busy: %w", RetryAfter(time.Millisecond+1)), OutcomeLater, 2},
		{"retry after on the last attempt", 3, 0, Policy{}, RetryAfter(time.Second), OutcomeLater, 1000},
		{"retry after, clamped to 0: the backoff", 1, 0, Policy{}, RetryAfter(-time.Hour), OutcomeLater, 1000},
		{"retry after 0: the backoff, never at once", 2, 0, Policy{}, RetryAfter(0), OutcomeLater, 2000},
		{"retry after 0 on the last attempt", 3, 0, Policy{}, RetryAfterError(0, boom), OutcomeLater, 3000},
		{"permanent retry after", 1, 0, Policy{}, Permanent(RetryAfter(time.Second)), OutcomeDead, 0},
		{"timeout", 1, 0, Policy{}, fmt.Errorf("%w after 1s", ErrHandlerTimeout), OutcomeRetry, 1000},
		{"task's max attempts, fewer", 2, 0, Policy{MaxAttempts: 2}, boom, OutcomeDead, 0},
		{"task's max attempts, more", 3, 0, Policy{MaxAttempts: 5}, boom, OutcomeRetry, 3000},
		{"task's max attempts, last", 5, 0, Policy{MaxAttempts: 5}, boom, OutcomeDead, 0},
		{"retry after, the last postponement", 1, MaxPostponements - 1, Policy{}, RetryAfter(time.Second), OutcomeLater, 1000},
		{"retry after past MaxPostponements: a retry, same delay", 1, MaxPostponements, Policy{}, RetryAfter(time.Second), OutcomeRetry, 1000},
		{"retry after 0 past MaxPostponements: the backoff", 2, MaxPostponements, Policy{}, RetryAfter(0), OutcomeRetry, 2000},
		{"retry after past MaxPostponements on the last attempt", 3, MaxPostponements, Policy{}, RetryAfter(time.Second), OutcomeDead, 0},
		{"retry after past the task's max attempts", 2, MaxPostponements + 5, Policy{MaxAttempts: 2}, RetryAfter(time.Second), OutcomeDead, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d := &delivery{task: Task{Key: "k", Attempt: tc.attempt}, policy: tc.policy, postponements: tc.later}
			o := r.outcomeOf(d, tc.err)
			assert.Equal(t, tc.kind, o.kind)
			assert.Equal(t, tc.delay, o.delay)
			if tc.err != nil {
				assert.Equal(t, tc.err.Error(), o.err, "the error is kept as the last error")
			}
		})
	}

	// The task's backoff replaces the Queue's (which would say hours here).
	for attempt := 1; attempt <= 10; attempt++ {
		d := &delivery{task: Task{Attempt: attempt}, policy: Policy{MaxAttempts: 20, BackoffBase: 10 * time.Millisecond, BackoffLimit: 40 * time.Millisecond}}
		for range 50 {
			o := r.outcomeOf(d, boom)
			require.Equal(t, OutcomeRetry, o.kind)
			require.LessOrEqual(t, o.delay, min(int64(10<<(attempt-1)), 40), "attempt %d", attempt)
		}
	}

	// A long error is cut.
	o := r.outcomeOf(&delivery{task: Task{Attempt: 1}}, errors.New(strings.Repeat("x", 2*maxErrorText)))
	assert.Len(t, o.err, maxErrorText)

	// ... on a rune's boundary, as UTF-8 without NUL (storableText).
	o = r.outcomeOf(&delivery{task: Task{Attempt: 1}}, errors.New("\x00\xff"+strings.Repeat("é", maxErrorText)))
	assert.Equal(t, "\uFFFD"+strings.Repeat("é", (maxErrorText-3)/2), o.err)

	// Once shutdown has cancelled the handlers, a failure is a release; a
	// success or a Permanent still counts.
	work, stop := context.WithCancel(context.Background())
	stop()
	r.work = work
	d := &delivery{task: Task{Attempt: 3}}
	assert.Equal(t, OutcomeRelease, r.outcomeOf(d, boom).kind)
	assert.Equal(t, OutcomeRelease, r.outcomeOf(d, RetryAfter(time.Second)).kind)
	assert.Equal(t, OutcomeDone, r.outcomeOf(d, nil).kind)
	assert.Equal(t, OutcomeDead, r.outcomeOf(d, Permanent(boom)).kind)
}

func TestFullJitter(t *testing.T) {
	cases := []struct {
		base, limit time.Duration
		attempt     int
		ceiling     time.Duration
	}{
		{time.Second, time.Hour, 0, time.Second},
		{time.Second, time.Hour, 1, time.Second},
		{time.Second, time.Hour, 3, 4 * time.Second},
		{time.Second, time.Hour, 13, time.Hour},
		{time.Second, time.Hour, math.MaxInt, time.Hour},
		{time.Hour, time.Duration(math.MaxInt64), 100, time.Duration(math.MaxInt64 - 1)},
		{time.Duration(math.MaxInt64), time.Duration(math.MaxInt64), 2, time.Duration(math.MaxInt64 - 1)},
		{3 * time.Millisecond, 5 * time.Millisecond, 3, 5 * time.Millisecond},
	}
	for _, tc := range cases {
		var most time.Duration
		for range 2000 {
			d := fullJitter(tc.base, tc.limit, tc.attempt)
			require.GreaterOrEqual(t, d, time.Duration(0))
			require.LessOrEqual(t, d, tc.ceiling, "%+v", tc)
			most = max(most, d)
		}
		assert.Greater(t, most, tc.ceiling/2, "%+v: the whole range is used", tc)
	}
}
