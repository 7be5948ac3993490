package search

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/durable/memstore"
)

func TestMatch(t *testing.T) {
	oneOff := durable.TaskInfo{Key: "orders/1", LastError: "Post: i/o TIMEOUT"}
	run := durable.TaskInfo{Key: "periodic:tick~a@1000"}
	for _, tc := range []struct {
		f         Filter
		one, runs bool
	}{
		{Filter{}, true, false},
		{Filter{Kind: KindOneOff}, true, false},
		{Filter{Kind: KindSchedule}, false, true},
		{Filter{Kind: KindAll}, true, true},
		{Filter{Kind: KindAll, Prefix: "orders/"}, true, false},
		{Filter{Kind: KindAll, Error: "timeout"}, true, false},
		{Filter{Error: "410"}, false, false},
	} {
		if got := tc.f.Match(oneOff); got != tc.one {
			t.Errorf("%+v matches %s: %v", tc.f, oneOff.Key, got)
		}
		if got := tc.f.Match(run); got != tc.runs {
			t.Errorf("%+v matches %s: %v", tc.f, run.Key, got)
		}
	}
	for _, f := range []Filter{{Kind: "nope"}, {Prefix: string(make([]byte, MaxFilter+1))}, {Error: string(make([]byte, MaxFilter+1))}} {
		if err := f.Check(); !errors.Is(err, ErrFilter) {
			t.Errorf("Check(%.20q...): %v, want ErrFilter", f, err)
		}
	}
}

// A search over more than its bound of tasks stops there and returns its
// continuation; the next call goes on from there and finds the match at the
// end: each call's work is bounded, and the walk covers the whole state. A
// page never holds more than want matches. (Scan's bounds are MaxScan and
// MaxCalls; smaller ones here keep the test quick.)
func TestScanIsBoundedAndContinues(t *testing.T) {
	ctx := context.Background()
	q, err := durable.New(memstore.New(memstore.Options{}), durable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Hour)
	var items []durable.Item
	b := bounds{tasks: 1000, calls: 40}
	for i := range b.tasks + 200 {
		items = append(items, durable.Item{Key: fmt.Sprintf("hay/%05d", i), At: at})
	}
	items = append(items, durable.Item{Key: "zz/needle", At: at})
	if _, err := q.AddBatch(ctx, items); err != nil {
		t.Fatal(err)
	}

	r, err := scan(ctx, q, durable.StateScheduled, "", Filter{Prefix: "zz/"}, 50, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scanned != b.tasks || len(r.Tasks) != 0 || r.Next == "" || !r.Stopped(50) {
		t.Fatalf("first call: scanned %d, %d matches, next %q; want %d, none, a continuation", r.Scanned, len(r.Tasks), r.Next, b.tasks)
	}
	r, err = scan(ctx, q, durable.StateScheduled, r.Next, Filter{Prefix: "zz/"}, 50, b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Scanned != 201 || len(r.Tasks) != 1 || r.Tasks[0].Key != "zz/needle" || r.Next != "" {
		t.Fatalf("second call: scanned %d, matches %d, next %q; want the 201 left, the needle, the end", r.Scanned, len(r.Tasks), r.Next)
	}

	// 10 calls reading 1 task each: the calls' bound holds too.
	r, err = scan(ctx, q, durable.StateScheduled, "", Filter{Prefix: "zz/"}, 1, bounds{tasks: 1000, calls: 10})
	if err != nil {
		t.Fatal(err)
	}
	if r.Scanned != 10 || r.Next == "" {
		t.Fatalf("want 1 and 10 calls: scanned %d, next %q; want 10 and a continuation", r.Scanned, r.Next)
	}
	r, err = Scan(ctx, q, durable.StateScheduled, "", Filter{Prefix: "hay/"}, 7)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Tasks) != 7 || r.Scanned != 7 || r.Tasks[6].Key != "hay/00006" {
		t.Fatalf("want 7: %d matches of %d read", len(r.Tasks), r.Scanned)
	}
	if _, err := Scan(ctx, q, durable.StateScheduled, "nonsense", Filter{}, 7); !errors.Is(err, durable.ErrCursor) {
		t.Errorf("a bad cursor: %v, want ErrCursor", err)
	}
}

// Each visits every match once from the first, also while the visit moves
// the tasks (cancels them), and says it reached the end; a visit that
// says stop stops it.
func TestEach(t *testing.T) {
	ctx := context.Background()
	q, err := durable.New(memstore.New(memstore.Options{}), durable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Now().Add(time.Hour)
	var items []durable.Item
	for i := range 3 * eachPage {
		items = append(items, durable.Item{Key: fmt.Sprintf("k/%04d", i), At: at.Add(time.Duration(i) * time.Millisecond)})
	}
	if _, err := q.AddBatch(ctx, items); err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	scanned, complete, err := Each(ctx, q, durable.StateScheduled, Filter{Prefix: "k/00"}, func(ti durable.TaskInfo) (bool, error) {
		seen[ti.Key]++
		_, err := q.Cancel(ctx, ti.Key)
		return true, err
	})
	if err != nil || !complete || scanned != 3*eachPage {
		t.Fatalf("Each: scanned %d, complete %v, %v; want all %d", scanned, complete, err, 3*eachPage)
	}
	if len(seen) != 100 {
		t.Errorf("visited %d keys, want the 100 of k/00", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%s visited %d times", k, n)
		}
	}
	n := 0
	_, complete, err = Each(ctx, q, durable.StateScheduled, Filter{}, func(durable.TaskInfo) (bool, error) { n++; return n < 5, nil })
	if err != nil || complete || n != 5 {
		t.Errorf("a visit that stops at 5: %d visits, complete %v, %v", n, complete, err)
	}
}
