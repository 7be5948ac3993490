// Package pq is a generic priority queue: a binary min-heap, as small as its
// one user (package delayqueue) needs: push, peek, pop.
//
// The queue is not safe for concurrent use; callers hold their own lock.
package pq

// Queue is a min-heap ordered by less. The zero value is not usable; call New.
type Queue[T any] struct {
	items []T
	less  func(a, b T) bool
}

// New returns an empty queue ordered by less (the head is the element for
// which less is true against every other).
func New[T any](less func(a, b T) bool) *Queue[T] {
	if less == nil {
		panic("pq: New called with nil less")
	}
	return &Queue[T]{less: less}
}

// Len reports the number of elements.
func (q *Queue[T]) Len() int { return len(q.items) }

// Peek returns the head without removing it; ok is false if q is empty.
func (q *Queue[T]) Peek() (x T, ok bool) {
	if len(q.items) == 0 {
		return x, false
	}
	return q.items[0], true
}

// Push adds x.
func (q *Queue[T]) Push(x T) {
	q.items = append(q.items, x)
	q.up(len(q.items) - 1)
}

// Pop removes and returns the head; ok is false if q is empty.
func (q *Queue[T]) Pop() (x T, ok bool) {
	n := len(q.items) - 1
	if n < 0 {
		return x, false
	}
	x = q.items[0]
	q.items[0] = q.items[n]
	var zero T
	q.items[n] = zero // let the garbage collector have it
	q.items = q.items[:n]
	q.down(0)
	return x, true
}

// Clear removes every element and releases the backing array.
func (q *Queue[T]) Clear() { q.items = nil }

func (q *Queue[T]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !q.less(q.items[i], q.items[parent]) {
			return
		}
		q.items[i], q.items[parent] = q.items[parent], q.items[i]
		i = parent
	}
}

func (q *Queue[T]) down(i int) {
	n := len(q.items)
	for {
		child := 2*i + 1
		if child >= n {
			return
		}
		if right := child + 1; right < n && q.less(q.items[right], q.items[child]) {
			child = right
		}
		if !q.less(q.items[child], q.items[i]) {
			return
		}
		q.items[i], q.items[child] = q.items[child], q.items[i]
		i = child
	}
}
