package dashboard

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// A task whose handler detached (a callback that answered 202) reads as
// waiting for completion, not as a running delivery's lease.
func TestTaskPageDetached(t *testing.T) {
	q := newQueue(t, standalone(t))
	h := newDashboard(t, q)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = q.Run(ctx, func(context.Context, durable.Task) error { return durable.Detach(time.Hour) })
	}()
	defer wg.Wait()
	defer cancel()
	if _, err := q.Add(context.Background(), "k", nil, time.Now()); err != nil {
		t.Fatal(err)
	}
	eventually(t, time.Minute, "the page to say the task waits for completion", func() bool {
		return strings.Contains(get(t, h, "/ui/task?key=k", true).body, "waiting for completion until then")
	})
}
