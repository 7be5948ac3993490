package storetest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// An Add and a Replace of one key that meet in one group commit (one
// Store.Add) are applied as if the Replace came first, whichever of the two
// was called first: the Replace's task is stored and acknowledged, and the
// Add reports false, as after any Replace. No acknowledged Replace is lost
// to a concurrent Add.
func testAddAndReplaceInOneGroupCommit(t *testing.T, open func(t *testing.T) durable.Store) {
	plug := &plugStore{Store: open(t), held: make(chan struct{}), release: make(chan struct{})}
	q := newQueue(t, plug, durable.Options{})
	ctx := context.Background()
	at := time.Now().Add(time.Hour)
	const addPayload, replacePayload = "first", "second-longer"
	for round, replaceFirst := range []bool{false, true, false, true} {
		key := fmt.Sprint("k", round)
		plugged := make(chan error, 1)
		go func() {
			_, err := q.Add(ctx, fmt.Sprint(plugPrefix, round), nil, at)
			plugged <- err
		}()
		await(t, plug.held, "the plug's Store.Add")
		// While the plug's batch is held, both calls queue up for the next
		// batch, in the order of the round.
		added, replaced := make(chan bool, 1), make(chan error, 1)
		calls := []func(){
			func() {
				ok, err := q.Add(ctx, key, []byte(addPayload), at)
				if err != nil {
					t.Errorf("round %d: Add: %v", round, err)
				}
				added <- ok
			},
			func() { replaced <- q.Replace(ctx, key, []byte(replacePayload), at) },
		}
		if replaceFirst {
			calls[0], calls[1] = calls[1], calls[0]
		}
		for _, call := range calls {
			go call()
			time.Sleep(20 * time.Millisecond)
		}
		plug.release <- struct{}{}
		if err := await(t, plugged, "the plug's Add"); err != nil {
			t.Fatalf("round %d: plug: %v", round, err)
		}
		if err := await(t, replaced, "the Replace"); err != nil {
			t.Errorf("round %d: Replace: %v, want nil", round, err)
		}
		ok := await(t, added, "the Add")
		info, err := q.Get(ctx, key)
		if err != nil {
			t.Fatalf("round %d: Get: %v", round, err)
		}
		if info.PayloadSize != len(replacePayload) {
			t.Errorf("round %d (Replace called first: %v): Add returned %v, Replace nil, and the task has a payload of %d bytes, want the Replace's %d: an acknowledged Replace was lost",
				round, replaceFirst, ok, info.PayloadSize, len(replacePayload))
		}
	}
	if got := totals(t, q); got != (durable.ShardStats{Scheduled: 8}) {
		t.Errorf("Stats: %+v, want 8 scheduled (4 plugs, 4 keys)", got)
	}
}

// plugPrefix starts the keys whose Store.Add plugStore holds.
const plugPrefix = "plug:"

// plugStore holds each Store.Add of a plug key until the test releases it,
// so that the Queue's other Adds wait meanwhile and go out together in the
// next one: a group commit made on purpose.
type plugStore struct {
	durable.Store
	held    chan struct{} // receives once a plug's Add is held
	release chan struct{} // lets it go on
}

func (p *plugStore) Add(ctx context.Context, reqs []*durable.AddRequest) int64 {
	if len(reqs) == 1 && strings.HasPrefix(reqs[0].Key, plugPrefix) {
		p.held <- struct{}{}
		<-p.release
	}
	return p.Store.Add(ctx, reqs)
}
