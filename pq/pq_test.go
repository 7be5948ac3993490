package pq

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

type elem struct {
	prio  int
	index int
}

func newElemQueue() *Queue[*elem] {
	return New(func(a, b *elem) bool { return a.prio < b.prio },
		func(e *elem, i int) { e.index = i })
}

func TestPopOrder(t *testing.T) {
	q := newElemQueue()
	_, ok := q.Pop()
	require.False(t, ok, "Pop of an empty queue")
	_, ok = q.Peek()
	require.False(t, ok, "Peek of an empty queue")

	want := []int{5, 3, 9, 1, 1, 7, 0, 3}
	for _, p := range want {
		q.Push(&elem{prio: p})
	}
	require.Equal(t, len(want), q.Len())
	slices.Sort(want)
	var got []int
	for q.Len() > 0 {
		head, _ := q.Peek()
		e, ok := q.Pop()
		require.True(t, ok)
		require.Same(t, head, e, "Peek and Pop disagree")
		require.Equal(t, -1, e.index, "a popped element is told it left")
		got = append(got, e.prio)
	}
	require.Equal(t, want, got)
}

// TestRandomAgainstSortedSlice holds the heap against a sorted slice under a
// random mix of Push, Pop, Remove and Fix, checking every reported index.
func TestRandomAgainstSortedSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	q := newElemQueue()
	var live []*elem
	for step := 0; step < 20000; step++ {
		switch op := r.IntN(4); {
		case op == 0 || len(live) == 0:
			e := &elem{prio: r.IntN(100)}
			q.Push(e)
			live = append(live, e)
		case op == 1:
			e, ok := q.Pop()
			require.True(t, ok)
			min := slices.MinFunc(live, func(a, b *elem) int { return a.prio - b.prio })
			require.Equal(t, min.prio, e.prio)
			live = slices.DeleteFunc(live, func(x *elem) bool { return x == e })
		case op == 2:
			e := live[r.IntN(len(live))]
			got := q.Remove(e.index)
			require.Same(t, e, got)
			require.Equal(t, -1, e.index)
			live = slices.DeleteFunc(live, func(x *elem) bool { return x == e })
		default:
			e := live[r.IntN(len(live))]
			e.prio = r.IntN(100)
			q.Fix(e.index)
		}
		require.Equal(t, len(live), q.Len())
		for i, e := range q.items {
			require.Equal(t, i, e.index, "element at %d was told %d", i, e.index)
			if i > 0 {
				require.False(t, q.less(e, q.items[(i-1)/2]), "heap order broken at %d", i)
			}
		}
	}
}

func TestClear(t *testing.T) {
	q := newElemQueue()
	es := []*elem{{prio: 2}, {prio: 1}}
	for _, e := range es {
		q.Push(e)
	}
	q.Clear()
	require.Zero(t, q.Len())
	for _, e := range es {
		require.Equal(t, -1, e.index)
	}
}

func TestNilSetIndex(t *testing.T) {
	q := New(func(a, b int) bool { return a < b }, nil)
	for _, x := range []int{3, 1, 2} {
		q.Push(x)
	}
	q.Remove(1)
	x, ok := q.Pop()
	require.True(t, ok)
	require.Equal(t, 1, x)
}

func TestNewNilLessPanics(t *testing.T) {
	require.PanicsWithValue(t, "pq: New called with nil less", func() { New[int](nil, nil) })
}

func BenchmarkPushPop(b *testing.B) {
	q := New(func(a, b int64) bool { return a < b }, nil)
	for i := 0; i < 1024; i++ {
		q.Push(int64(i * 7919 % 1024))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x, _ := q.Pop()
		q.Push(x + 1024)
	}
}
