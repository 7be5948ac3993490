package timingwheel

// vacantList is a shard's vacant buckets (see bucket), oldest first: a
// bucket joins at the end when it is left vacant and leaves from anywhere
// (a timer lands in it, the advancer takes it, it is withdrawn), leaving a
// hole that the front skips and a compaction removes. Oldest first, so
// that when the shard may keep no more, the bucket that goes is the one
// timers stopped landing in longest ago, not the one of the slot they land
// in now (retire). A bucket's vacant field is its index in list plus one,
// 0 when it is not vacant.
type vacantList struct {
	list []*bucket
	head int // list[:head] are holes
	n    int // vacant buckets: the entries of list that are not holes
}

// push adds b, which is not vacant, as the newest. A full list whose
// front has holes is compacted into its own space first, rather than
// grown: the front moves on as the oldest buckets leave (oldest), so a
// list grown instead would copy itself, holes and all, again and again (1
// B/op and 6% of a Reset moving timers earlier with 1k pending;
// TestVacantListReusesItsFront).
func (v *vacantList) push(b *bucket) {
	if len(v.list) == cap(v.list) && v.head > 0 {
		v.compact()
	}
	v.list = append(v.list, b)
	b.vacant = int32(len(v.list))
	v.n++
}

// remove takes b out, if it is vacant.
func (v *vacantList) remove(b *bucket) {
	i := int(b.vacant) - 1
	if i < 0 {
		return
	}
	v.list[i] = nil
	b.vacant = 0
	v.n--
	switch {
	case v.n == 0:
		clear(v.list[v.head:])
		v.list, v.head = v.list[:0], 0
		if cap(v.list) > 64 {
			v.list = nil // memory goes with the timers (TestStoppedTimersHoldNoMemory)
		}
	case len(v.list)-v.head > 2*v.n+8:
		v.compact()
	}
}

// oldest returns the vacant bucket that joined first; the list must not be
// empty.
func (v *vacantList) oldest() *bucket {
	for v.list[v.head] == nil {
		v.head++
	}
	return v.list[v.head]
}

// compact moves the vacant buckets to the front, in order, dropping the
// holes.
func (v *vacantList) compact() {
	k := 0
	for _, b := range v.list[v.head:] {
		if b != nil {
			v.list[k] = b
			k++
			b.vacant = int32(k)
		}
	}
	clear(v.list[k:])
	v.list, v.head = v.list[:k], 0
	if c := cap(v.list); c > 64 && k < c/4 {
		v.list = append(make([]*bucket, 0, 2*k), v.list...)
	}
}

// clearAll forgets every vacant bucket (the shard is stopping).
func (v *vacantList) clearAll() {
	for _, b := range v.list[v.head:] {
		if b != nil {
			b.vacant = 0
		}
	}
	*v = vacantList{}
}
