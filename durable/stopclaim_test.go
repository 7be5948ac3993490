package durable

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// stopClaimStore leases one task in its first Claim, which waits for the
// test before answering; like a database whose commit went through while
// the caller gave up, it leases whether or not the caller's ctx has ended,
// and then answers ctx's error if it has. Settle records the outcomes.
type stopClaimStore struct {
	Store   // nil: no other operation may be called
	entered chan struct{}
	release chan struct{}

	mu       sync.Mutex
	claims   int
	outcomes []Outcome
}

func (*stopClaimStore) Partitions() int { return 1 }

func (s *stopClaimStore) Claim(ctx context.Context, _, _ int, _ time.Duration, _ Limits) (Claimed, error) {
	s.mu.Lock()
	s.claims++
	first := s.claims == 1
	s.mu.Unlock()
	now := time.Now().UnixMilli()
	if !first {
		return Claimed{Now: now, Next: -1}, nil
	}
	close(s.entered)
	<-s.release
	if err := ctx.Err(); err != nil {
		return Claimed{}, err // leased in the store; the reply is lost
	}
	return Claimed{Now: now, Next: -1, Tasks: []ClaimedTask{{Key: "k", Attempt: 1, Due: now, OriginalDue: now, Token: "t1"}}}, nil
}

func (s *stopClaimStore) Extend(_ context.Context, _ int, _ time.Duration, ls []Lease) ([]ExtendCode, error) {
	codes := make([]ExtendCode, len(ls))
	for i := range codes {
		codes[i] = ExtendOK
	}
	return codes, nil
}

func (s *stopClaimStore) Settle(_ context.Context, _ int, _ Limits, os []Outcome) (Settled, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.outcomes = append(s.outcomes, os...)
	codes := make([]SettleCode, len(os))
	for i := range codes {
		codes[i] = SettleReleased
	}
	return Settled{Codes: codes, Next: -1}, nil
}

// A claim under way when Run's context ends runs to its end, and what it
// leased is handed straight back (released: due at once, attempt not
// counted) instead of being left in flight until its lease ends.
func TestClaimUnderWayAtStopIsHandedBack(t *testing.T) {
	st := &stopClaimStore{entered: make(chan struct{}), release: make(chan struct{})}
	q := stubQueueOn(t, st, Options{PollInterval: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	handled := make(chan string, 1)
	go func() {
		done <- q.Run(ctx, func(_ context.Context, tk Task) error { handled <- tk.Key; return nil })
	}()
	await(t, st.entered, "the first claim")
	cancel()
	close(st.release)
	require.NoError(t, await(t, done, "Run to return"))
	select {
	case k := <-handled:
		t.Fatalf("the handler ran for %s after Run was stopped", k)
	default:
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	require.Equal(t, []Outcome{{Key: "k", Token: "t1", Kind: OutcomeRelease}}, st.outcomes,
		"the task claimed as Run stopped was not handed back")
}
