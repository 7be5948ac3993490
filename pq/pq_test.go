package pq

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newIntQueue() *Queue[int] { return New(func(a, b int) bool { return a < b }) }

func TestPopOrder(t *testing.T) {
	q := newIntQueue()
	_, ok := q.Pop()
	require.False(t, ok, "Pop of an empty queue")
	_, ok = q.Peek()
	require.False(t, ok, "Peek of an empty queue")

	want := []int{5, 3, 9, 1, 1, 7, 0, 3}
	for _, p := range want {
		q.Push(p)
	}
	require.Equal(t, len(want), q.Len())
	slices.Sort(want)
	var got []int
	for q.Len() > 0 {
		head, _ := q.Peek()
		x, ok := q.Pop()
		require.True(t, ok)
		require.Equal(t, head, x, "Peek and Pop disagree")
		got = append(got, x)
	}
	require.Equal(t, want, got)
}

// TestRandomAgainstSortedSlice holds the heap against a sorted slice under a
// random mix of Push and Pop, checking the heap order after every operation.
func TestRandomAgainstSortedSlice(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	q := newIntQueue()
	var live []int
	for step := 0; step < 20000; step++ {
		if r.IntN(2) == 0 || len(live) == 0 {
			x := r.IntN(100)
			q.Push(x)
			live = append(live, x)
		} else {
			x, ok := q.Pop()
			require.True(t, ok)
			slices.Sort(live)
			require.Equal(t, live[0], x)
			live = live[1:]
		}
		require.Equal(t, len(live), q.Len())
		for i := 1; i < len(q.items); i++ {
			require.False(t, q.less(q.items[i], q.items[(i-1)/2]), "heap order broken at %d", i)
		}
	}
}

func TestPopReleasesTheElement(t *testing.T) {
	q := New(func(a, b *int) bool { return *a < *b })
	one, two := 1, 2
	q.Push(&two)
	q.Push(&one)
	q.Pop()
	require.Nil(t, q.items[:2][1], "a popped slot keeps a pointer alive")
}

func TestClear(t *testing.T) {
	q := newIntQueue()
	q.Push(2)
	q.Push(1)
	q.Clear()
	require.Zero(t, q.Len())
	require.Nil(t, q.items, "Clear keeps the backing array")
}

func TestNewNilLessPanics(t *testing.T) {
	require.PanicsWithValue(t, "pq: New called with nil less", func() { New[int](nil) })
}

func BenchmarkPushPop(b *testing.B) {
	q := New(func(a, b int64) bool { return a < b })
	for i := 0; i < 1024; i++ {
		q.Push(int64(i * 7919 % 1024))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		x, _ := q.Pop()
		q.Push(x + 1024)
	}
}
