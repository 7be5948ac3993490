// Package pq is a generic indexed priority queue: a binary min-heap whose
// elements are told their position, so that an element can later be removed
// or re-prioritised in O(log n) without a search.
//
// The queue is not safe for concurrent use; callers hold their own lock.
package pq

// Queue is a min-heap ordered by less. The zero value is not usable; call New.
type Queue[T any] struct {
	items    []T
	less     func(a, b T) bool
	setIndex func(x T, i int)
}

// New returns an empty queue ordered by less (the head is the element for
// which less is true against every other). If setIndex is not nil it is
// called whenever an element takes a new position i, and with -1 when the
// element leaves the queue, so the element can remember where it is.
func New[T any](less func(a, b T) bool, setIndex func(x T, i int)) *Queue[T] {
	if less == nil {
		panic("pq: New called with nil less")
	}
	return &Queue[T]{less: less, setIndex: setIndex}
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
	i := len(q.items) - 1
	q.moved(i)
	q.up(i)
}

// Pop removes and returns the head; ok is false if q is empty.
func (q *Queue[T]) Pop() (x T, ok bool) {
	if len(q.items) == 0 {
		return x, false
	}
	return q.Remove(0), true
}

// Remove removes and returns the element at position i, as last reported to
// setIndex. It panics if i is out of range.
func (q *Queue[T]) Remove(i int) T {
	n := len(q.items) - 1
	x := q.items[i]
	if i != n {
		q.swap(i, n)
	}
	var zero T
	q.items[n] = zero // let the garbage collector have it
	q.items = q.items[:n]
	if i != n {
		if !q.down(i) {
			q.up(i)
		}
	}
	if q.setIndex != nil {
		q.setIndex(x, -1)
	}
	return x
}

// Fix restores the heap order after the priority of the element at position
// i changed.
func (q *Queue[T]) Fix(i int) {
	if !q.down(i) {
		q.up(i)
	}
}

// Clear removes every element, telling each it left, and releases the
// backing array.
func (q *Queue[T]) Clear() {
	if q.setIndex != nil {
		for _, x := range q.items {
			q.setIndex(x, -1)
		}
	}
	q.items = nil
}

func (q *Queue[T]) up(i int) {
	for i > 0 {
		parent := (i - 1) / 2
		if !q.less(q.items[i], q.items[parent]) {
			return
		}
		q.swap(i, parent)
		i = parent
	}
}

// down sifts the element at i towards the leaves and reports whether it moved.
func (q *Queue[T]) down(i int) bool {
	start, n := i, len(q.items)
	for {
		child := 2*i + 1
		if child >= n {
			break
		}
		if right := child + 1; right < n && q.less(q.items[right], q.items[child]) {
			child = right
		}
		if !q.less(q.items[child], q.items[i]) {
			break
		}
		q.swap(i, child)
		i = child
	}
	return i > start
}

func (q *Queue[T]) swap(i, j int) {
	q.items[i], q.items[j] = q.items[j], q.items[i]
	q.moved(i)
	q.moved(j)
}

func (q *Queue[T]) moved(i int) {
	if q.setIndex != nil {
		q.setIndex(q.items[i], i)
	}
}
