package pq

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// item is an element that keeps the position an indexed queue gives it.
type item struct {
	key int
	pos int // -1 when not queued
}

func newItemQueue() *Queue[*item] {
	return NewIndexed(func(a, b *item) bool { return a.key < b.key },
		func(x *item, i int) { x.pos = i })
}

// TestIndexedAgainstSortedSlice holds an indexed queue against a sorted slice
// under a random mix of Push, Pop, Remove of any element and Set of a
// new key, checking after
// every operation that each element's position is where it is, that removed
// ones say -1, and the heap order.
func TestIndexedAgainstSortedSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	q := newItemQueue()
	var live []*item // the reference: every queued item
	byKey := func(a, b *item) int { return a.key - b.key }
	for step := 0; step < 30000; step++ {
		switch op := r.IntN(10); {
		case op < 5 || len(live) == 0:
			x := &item{key: r.IntN(200), pos: -1}
			q.Push(x)
			live = append(live, x)
		case op < 6 && len(live) > 0:
			x := live[r.IntN(len(live))]
			x.key = r.IntN(200) // re-ordered in place, as a re-offered value is
			q.Set(x.pos, x)
		case op < 7:
			x, ok := q.Pop()
			require.True(t, ok)
			slices.SortStableFunc(live, byKey)
			require.Equal(t, live[0].key, x.key, "Pop is not the least")
			i := slices.Index(live, x)
			require.GreaterOrEqual(t, i, 0, "Pop returned an element not queued")
			live = slices.Delete(live, i, i+1)
			require.Equal(t, -1, x.pos, "a popped element keeps a position")
		default:
			i := r.IntN(len(live))
			x := live[i]
			require.Same(t, x, q.Remove(x.pos), "Remove took another element")
			require.Equal(t, -1, x.pos, "a removed element keeps a position")
			live = slices.Delete(live, i, i+1)
		}
		require.Equal(t, len(live), q.Len())
		for i, x := range q.items {
			if x.pos != i {
				t.Fatalf("step %d: element at %d says %d", step, i, x.pos)
			}
			if i > 0 && q.less(x, q.items[(i-1)/2]) {
				t.Fatalf("step %d: heap order broken at %d", step, i)
			}
		}
	}
	// Drain in order.
	slices.SortStableFunc(live, byKey)
	for _, want := range live {
		x, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, want.key, x.key)
	}
}

func TestRemoveReleasesTheElementAndShrinks(t *testing.T) {
	q := newItemQueue()
	items := make([]*item, 10000)
	for i := range items {
		items[i] = &item{key: i}
		q.Push(items[i])
	}
	for _, x := range items[:len(items)-1] {
		q.Remove(x.pos)
	}
	require.Equal(t, 1, q.Len())
	require.LessOrEqual(t, cap(q.items), minShrink, "a drained queue keeps the array of 10000")
	require.Nil(t, q.items[:2][1], "a removed slot keeps a pointer alive")
}

func TestClearTellsEveryElement(t *testing.T) {
	q := newItemQueue()
	a, b := &item{key: 1}, &item{key: 2}
	q.Push(a)
	q.Push(b)
	q.Clear()
	require.Equal(t, -1, a.pos)
	require.Equal(t, -1, b.pos)
}

func TestNewIndexedNilAtPanics(t *testing.T) {
	require.PanicsWithValue(t, "pq: NewIndexed called with nil at", func() {
		NewIndexed(func(a, b int) bool { return a < b }, nil)
	})
}

func BenchmarkIndexedPushRemove(b *testing.B) {
	q := newItemQueue()
	items := make([]*item, 1024)
	for i := range items {
		items[i] = &item{key: i * 7919 % 1024}
		q.Push(items[i])
	}
	r := rand.New(rand.NewPCG(5, 6))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x := items[r.IntN(len(items))]
		q.Remove(x.pos)
		x.key += 1024
		q.Push(x)
	}
}
