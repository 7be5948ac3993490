package memstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/durable/memstore"
)

// fakeClock is a clock a test moves by hand.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// Every time the store reads is its Clock's: a task is due, a lease runs out
// and a retention ends by it, never by the machine's, and a deadline a delay
// after a reading inside a millisecond counts from the next one.
func TestClockIsTheStores(t *testing.T) {
	clock := &fakeClock{now: time.UnixMilli(1_000_000).Add(300 * time.Microsecond)}
	st := memstore.New(memstore.Options{Clock: clock.Now})
	ctx := context.Background()
	lim := durable.Limits{MaxAttempts: 3, MaxDead: 10, MaxRetained: 10, HistoryLen: 10, ReapBatch: 10, MaxUnconfirmed: 3}
	r := &durable.AddRequest{Key: "k", At: 1000, Relative: true}
	st.Add(ctx, []*durable.AddRequest{r})
	if info, err := st.Get(ctx, "k"); err != nil || info.Due.UnixMilli() != 1_001_001 {
		t.Fatalf("Get: %+v, %v, want due at 1001001 (1000000.3 rounded up, plus 1000)", info, err)
	}
	claim := func() durable.Claimed {
		t.Helper()
		c, err := st.Claim(ctx, 0, 10, time.Second, lim)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	clock.advance(999700 * time.Microsecond) // 1001000.0: a millisecond early
	if c := claim(); len(c.Tasks) != 0 || c.Now != 1_001_000 || c.Next != 1_001_001 {
		t.Fatalf("claim a millisecond early: %+v", c)
	}
	clock.advance(time.Millisecond)
	c := claim()
	if len(c.Tasks) != 1 || c.Next != 1_002_001 {
		t.Fatalf("claim when due: %+v, want the task, leased until 1002001", c)
	}
	clock.advance(time.Second) // the lease runs out, unconfirmed: no attempt counted
	if c := claim(); len(c.Tasks) != 1 || c.Tasks[0].Attempt != 1 {
		t.Fatalf("claim after the lease: %+v, want the task again, attempt 1", c)
	}
}
