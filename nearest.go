package timingwheel

// How retarget finds a bucket's earliest timer without scanning the bucket
// each time: a scan remembers the bucket's nearestMax earliest timers, and
// the retargets after it take the next one still valid from that list.
//
// A server's idle timeouts are re-armed on every read, in about the order
// they are due; a Reset to later leaves the timer in its bucket (see
// holds), so nearly every Reset moves its bucket's earliest timer, and
// retarget would scan the bucket (up to retargetMax timers, each a pointer
// to follow) at nearly every Reset: O(n) a Reset. With the list, a scan
// serves about nearestMax retargets (docs/design/retarget.md).

// nearestMax is how many of its earliest timers a bucket's scan remembers.
const nearestMax = 16

// nearest is what the last scan of a bucket found: its earliest timers
// with their due ticks then, sorted by due tick, from next on. An entry is
// valid while its timer is still in the bucket with that due tick. Every
// timer of the bucket without a valid entry is due at bound or later:
// those the scan passed over were, and a timer that lands in the bucket or
// is moved within it to a tick before bound clears the list (see
// noteDue). So the first valid entry is the bucket's earliest timer.
type nearest struct {
	entries []nearTimer
	next    int
	bound   int64
}

type nearTimer struct {
	t   *Timer
	due int64
}

// noteDue keeps b's list of its earliest timers true when a timer lands in
// b, or moves within it, to the tick due: before the list's bound, the list
// is forgotten and the next retarget scans. Callers hold the shard's mu.
func (b *bucket) noteDue(due int64) {
	if n := b.near; n != nil && due < n.bound {
		n.entries, n.next = n.entries[:0], 0
	}
}

// earliest returns the earliest due tick of b's timers (never for none),
// from the list of the last scan while it holds a valid entry, and
// otherwise by scanning b, which it remembers. Callers hold the shard's mu.
func (b *bucket) earliest() int64 {
	if n := b.near; n != nil {
		for ; n.next < len(n.entries); n.next++ {
			if e := n.entries[n.next]; e.t.bucket == b && e.t.due == e.due {
				return e.due
			}
			n.entries[n.next] = nearTimer{} // holds no stopped timer
		}
	}
	return b.scan()
}

// scan finds b's earliest timers, remembers up to nearestMax of them, and
// returns the earliest due tick (never for none).
func (b *bucket) scan() int64 {
	n := b.near
	if n == nil {
		n = &nearest{}
		b.near = n
	}
	if k := min(b.end()-int(b.taken), nearestMax); cap(n.entries) < k {
		n.entries = make([]nearTimer, 0, k)
	}
	es := n.entries[:0]
	for t := range b.all {
		if len(es) == cap(es) {
			if t.due >= es[len(es)-1].due {
				continue
			}
			es = es[:len(es)-1] // the latest gives way
		}
		i := len(es)
		es = append(es, nearTimer{})
		for ; i > 0 && es[i-1].due > t.due; i-- {
			es[i] = es[i-1]
		}
		es[i] = nearTimer{t, t.due}
	}
	clear(es[len(es):cap(es)]) // holds no timer that gave way
	n.entries, n.next = es, 0
	if len(es) == 0 {
		n.bound = never
		return never
	}
	// Every timer passed over is due no earlier than the last entry.
	n.bound = es[len(es)-1].due
	return es[0].due
}
