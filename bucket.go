package timingwheel

// noExpiration marks a bucket that is not in the delay queue.
const noExpiration = -1

// A bucket is one slot of one level of the wheel: a circular, intrusive,
// doubly linked list of timers threaded through a sentinel, and the tick at
// which the bucket is due. All fields are protected by the wheel's mu.
//
// A bucket is in the delay queue exactly when expiration != noExpiration: it is
// offered when its expiration changes (when the first timer lands in it for a
// new rotation) and taken out by the poller, which resets the expiration
// before it moves the timers on. A bucket that loses all its timers to Stop
// stays queued, and costs the poller one empty flush when it comes due.
type bucket struct {
	head       Timer // sentinel: head.next is the first timer, head.prev the last
	expiration int64 // in ticks since the wheel started, or noExpiration
}

func (b *bucket) init() {
	b.head.next, b.head.prev = &b.head, &b.head
	b.expiration = noExpiration
}

func (b *bucket) empty() bool { return b.head.next == &b.head }

// push appends t, which must not be in any bucket.
func (b *bucket) push(t *Timer) {
	last := b.head.prev
	t.prev, t.next = last, &b.head
	last.next = t
	b.head.prev = t
}

// unlink removes t from the bucket it is in, if any.
func (t *Timer) unlink() {
	if t.next == nil {
		return
	}
	t.prev.next = t.next
	t.next.prev = t.prev
	t.next, t.prev = nil, nil
}

// detachAll unlinks every timer of b, so that none keeps another reachable.
func (b *bucket) detachAll() {
	for t := b.head.next; t != &b.head; {
		next := t.next
		t.next, t.prev = nil, nil
		t = next
	}
	b.init()
}
