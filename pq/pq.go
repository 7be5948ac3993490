// Package pq is a generic priority queue: a binary min-heap, as small as its
// one user (package delayqueue) needs: push, peek, pop, and remove or
// re-order by position for a queue made with NewIndexed.
//
// The queue is not safe for concurrent use; callers hold their own lock.
package pq

// Queue is a min-heap ordered by less. The zero value is not usable; call New
// or NewIndexed.
type Queue[T any] struct {
	items []T
	less  func(a, b T) bool
	// at, when set, is told every element's new position whenever it
	// changes, and -1 when the element leaves the queue; so a caller can
	// remove an element that is not the head (see Remove).
	at func(x T, i int)
}

// minShrink is the capacity below which the backing array is never shrunk:
// a queue of a few elements keeps its array, one that held many gives most of
// it back when it drains (see shrink).
const minShrink = 64

// New returns an empty queue ordered by less (the head is the element for
// which less is true against every other).
func New[T any](less func(a, b T) bool) *Queue[T] {
	if less == nil {
		panic("pq: New called with nil less")
	}
	return &Queue[T]{less: less}
}

// NewIndexed is New for elements that keep their position: at(x, i) is called
// with x's position whenever it changes (on Push, Pop, Remove and every move
// within the heap), and with -1 when x leaves the queue, so that Remove can
// take x out from where it is. at runs within the call that moves x.
func NewIndexed[T any](less func(a, b T) bool, at func(x T, i int)) *Queue[T] {
	if at == nil {
		panic("pq: NewIndexed called with nil at")
	}
	q := New(less)
	q.at = at
	return q
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
	q.moved(len(q.items) - 1)
	q.up(len(q.items) - 1)
}

// Pop removes and returns the head; ok is false if q is empty.
func (q *Queue[T]) Pop() (x T, ok bool) {
	if len(q.items) == 0 {
		return x, false
	}
	return q.Remove(0), true
}

// Remove removes and returns the element at position i (0 is the head), as a
// NewIndexed queue last reported it. It panics if i is out of range.
func (q *Queue[T]) Remove(i int) T {
	n := len(q.items) - 1
	x := q.items[i]
	if i != n {
		q.items[i] = q.items[n]
		q.moved(i)
	}
	var zero T
	q.items[n] = zero // let the garbage collector have it
	q.items = q.items[:n]
	if i != n {
		q.Fix(i)
	}
	if q.at != nil {
		q.at(x, -1)
	}
	q.shrink()
	return x
}

// Fix restores the heap order after the element at position i changed in a
// way that may change its order (for a NewIndexed queue, as at last
// reported it).
func (q *Queue[T]) Fix(i int) {
	if !q.up(i) {
		q.down(i)
	}
}

// Set replaces the element at position i with x and restores the heap order.
func (q *Queue[T]) Set(i int, x T) {
	q.items[i] = x
	q.moved(i)
	q.Fix(i)
}

// Clear removes every element and releases the backing array.
func (q *Queue[T]) Clear() {
	if q.at != nil {
		for _, x := range q.items {
			q.at(x, -1)
		}
	}
	q.items = nil
}

// shrink gives back most of the backing array once the queue holds less than
// a quarter of it, so a queue that once held many elements does not keep
// their memory: a heap of a million buckets is 16 MiB.
func (q *Queue[T]) shrink() {
	if c := cap(q.items); c > minShrink && len(q.items) < c/4 {
		q.items = append(make([]T, 0, 2*len(q.items)), q.items...)
	}
}

func (q *Queue[T]) moved(i int) {
	if q.at != nil {
		q.at(q.items[i], i)
	}
}

func (q *Queue[T]) swap(i, j int) {
	q.items[i], q.items[j] = q.items[j], q.items[i]
	q.moved(i)
	q.moved(j)
}

// up moves the element at i towards the head while it is less than its
// parent, and reports whether it moved.
func (q *Queue[T]) up(i int) bool {
	start := i
	for i > 0 {
		parent := (i - 1) / 2
		if !q.less(q.items[i], q.items[parent]) {
			break
		}
		q.swap(i, parent)
		i = parent
	}
	return i != start
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
		q.swap(i, child)
		i = child
	}
}
