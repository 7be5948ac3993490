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
	scans   int // how many times the bucket was scanned: the work tests count
}

type nearTimer struct {
	t   *Timer
	due int64
}

// noteDue keeps b's list of its earliest timers true when t lands in b, or
// moves within it, to its due tick: before the list's bound, t gets an
// entry in order. A full list gives up its last entry for it and takes
// that entry's due tick as its bound (the timer it named, if still there,
// is due then, and every other timer without an entry no earlier). So a
// timer Reset again and again within a bucket, as a server's idle
// timeouts are, does not make the next retarget scan the bucket
// (docs/design/retarget.md). Callers hold the shard's mu.
func (b *bucket) noteDue(t *Timer) {
	if n := b.near; n != nil && t.due < n.bound {
		n.insert(t)
	}
}

// insert adds an entry for t, due before n's bound, keeping the entries in
// order of due tick without growing their array.
func (n *nearest) insert(t *Timer) {
	es := n.entries
	if n.next > 0 { // the entries passed over give their room
		k := copy(es, es[n.next:])
		clear(es[k:len(es)])
		es, n.next = es[:k], 0
	}
	if len(es) == cap(es) {
		if len(es) == 0 || t.due >= es[len(es)-1].due {
			n.entries, n.bound = es, t.due
			return
		}
		n.bound = es[len(es)-1].due
		es[len(es)-1] = nearTimer{}
		es = es[:len(es)-1]
	}
	i := len(es)
	es = append(es, nearTimer{})
	for ; i > 0 && es[i-1].due > t.due; i-- {
		es[i] = es[i-1]
	}
	es[i] = nearTimer{t, t.due}
	n.entries = es
}

// forget empties the list, holding no timer, for a bucket emptied: the next
// retarget scans.
func (n *nearest) forget() {
	clear(n.entries[:cap(n.entries)])
	n.entries, n.next, n.bound = n.entries[:0], 0, 0
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
		n = b.shard.takeNear()
		b.near = n
	}
	n.scans++
	if k := min(b.end()-int(b.taken), nearestMax); cap(n.entries) < k {
		if cap(n.entries) > 0 { // grown once from a small bucket's: at once to the most
			k = nearestMax
		}
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

// maxSpareNears is how many lists of released buckets a shard keeps (see
// keepNear), only while it has pending timers: at most 16 × 304 B.
const maxSpareNears = 16

// keepNear keeps n, the list of a bucket released, emptied, for the next
// bucket to scan, if the shard keeps fewer than maxSpareNears: so that
// small coarse buckets, emptied and filled again by random Resets, do not
// allocate a list at every scan (TestRandomResetsAllocateLittle). The lists go when the shard holds no
// pending timer but, maybe, the one being taken out, which is still
// counted while its bucket empties (see trimBlocks). Callers hold s.mu.
func (s *shard) keepNear(n *nearest) {
	if len(s.spareNears) < maxSpareNears && s.counters.pending > 1 {
		s.spareNears = append(s.spareNears, n)
	}
}

// takeNear returns an empty list for a bucket's first scan: a kept one
// if the shard has one (scan sizes its entries). Callers hold s.mu.
func (s *shard) takeNear() *nearest {
	if k := len(s.spareNears); k > 0 {
		n := s.spareNears[k-1]
		s.spareNears[k-1] = nil
		s.spareNears = s.spareNears[:k-1]
		return n
	}
	return &nearest{}
}
