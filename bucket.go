package timingwheel

import "github.com/go-timingwheel/timingwheel/delayqueue"

// noExpiration marks a bucket that is not in the delay queue.
const noExpiration = -1

// A bucket is one slot of one level of a shard: the timers due in the slot's
// range, and the tick at which the bucket is due. All fields are protected by
// its shard's mu.
//
// The timers are kept in arrays, each timer knowing its position, rather
// than in a linked list: removal is a swap with the last, and a Timer holds no
// pointer to another Timer. That matters to the garbage collector, which finds
// a million pending timers from a few arrays at once and marks them in
// parallel, where it would follow a list one cache miss at a time. The arrays
// are blocks of fixed size (see block.go), so that a bucket of a million
// timers never copies them to grow or shrink.
//
// A bucket is in the delay queue exactly when expiration != noExpiration,
// unless it is vacant (below): it is offered when its expiration changes
// (when the first timer lands in it for a new rotation) and taken out either
// by the advancer, which resets the expiration in the same hold of the
// shard's lock (see take), or when it empties before it is due, by the Stop,
// Reset or collection that empties it (see unlink and retire): so a bucket
// whose timers were all stopped sets no alarm. A bucket exists (is in its
// level's page) while it is queued, vacant or being flushed; the flush that
// empties it releases it.
//
// A vacant bucket is one that emptied before it was due and was left in its
// level and in the delay queue, rather than withdrawn under the queue's lock:
// the queue asks the shard about every new head before arming the alarm for
// it, and drops a vacant one (see dropVacant), so the poller is still never
// woken for it; and a timer that lands in it takes it back, usually still
// queued at the expiration it had, so that a timer alone in its bucket,
// armed and stopped in turn, takes the queue's lock neither to arm nor to
// stop, nor any atomic operation but its shard's lock (what was tried
// before: docs/design/vacant.md). Its expiration is the one it is queued at, or
// noExpiration once the queue dropped it. A shard keeps at most as many
// vacant buckets as others (see shard.vacant), so they hold memory in
// proportion to the pending timers.
type bucket struct {
	// blocks holds the bucket's timers at the indices [taken, end()),
	// blockSize to a block (see block.go); those before taken were taken
	// out by the flush in progress, oldest first (taken is 0 between
	// flushes), and the blocks they filled are nil. Every block but the
	// last is full; the last is empty only when the bucket is.
	blocks [][]*Timer
	taken  uint32 // as Timer.slot: a bucket holds fewer than 2^32 timers
	// vacant is b's index in its shard's vacant list plus one, 0 when b is
	// not vacant (see vacantList).
	vacant     int32
	expiration int64 // in ticks since the wheel started, or noExpiration
	shard      *shard
	// place is where the bucket is in its shard's levels: its level times
	// MaxWheelSize plus its slot's index in the level (see level and index).
	// One word for both keeps a bucket at 64 bytes.
	place uint32
	// queueSlot is the delay queue's (see delayqueue.NewIndexed): only the
	// queue reads and writes it.
	queueSlot delayqueue.Slot
	// near is what retarget's last scan found (see nearest), or nil.
	near *nearest
}

// level returns the level b is in.
func (b *bucket) level() int { return int(b.place / MaxWheelSize) }

// index returns the index of b's slot in its level.
func (b *bucket) index() int { return int(b.place % MaxWheelSize) }

func (b *bucket) empty() bool { return int(b.taken) == b.end() }

// holds reports whether a timer of b, due at the tick old, may stay in b
// when Reset moves it to the tick due: b's flush then re-inserts it by due,
// so due must not be before b expires. The test is b's expiration, not the
// old due tick, so that a timer moved earlier but still after its bucket's
// start stays too: a timer reset at random settles in an early bucket and
// stays there (docs/design/retarget.md). A bucket being flushed (expiration noExpiration) keeps a timer
// only for a later due tick, so that a timer reset to fire at once from a
// callback of the flush runs at the next tick, as a new one would, rather
// than within the flush that is handing out its own tick's callbacks.
//
// A due tick no earlier than old is tested first, without reading b: a
// queued bucket expires no later than its timers' due ticks.
func (b *bucket) holds(due, old int64) bool {
	return due >= old || b.expiration != noExpiration && due >= b.expiration
}

// files reports whether insertLocked would file a timer due at the tick
// due into b, queued: so a timer of b moved there, earlier than b expires
// but in b's slot, may stay in b, as a timer moved later does (see holds),
// rather than leave b empty, withdrawn, and come back to it.
func (b *bucket) files(due int64) bool {
	return b.expiration != noExpiration && due != never && due > b.shard.currentTick &&
		b.shard.placeOf(due) == b.place
}

// earlyExpiration returns the expiration b, queued, takes when a timer of
// b is moved earlier than b expires, to the tick due in b's slot (see
// files): due itself, or, when due is less than an eighth of its ticks to
// go before the expiration, that eighth earlier, no earlier than b's slot
// starts. So a deadline tightened a little, again and again, moves its
// bucket once in the delay queue, as it moves the alarm once (see
// delayqueue's lazy.go), and the bucket is flushed early at most once, at
// most an eighth of its time early: the flush files the timer by its due
// tick.
func (b *bucket) earlyExpiration(due int64) int64 {
	m := (due - b.shard.currentTick) >> 3
	if b.expiration-due > m {
		return due
	}
	shift := uint(b.level()) * b.shard.wheel.bits
	return max(due-m, due>>shift<<shift)
}

// push adds t, which must not be in any bucket.
func (b *bucket) push(t *Timer) {
	k := len(b.blocks)
	if k == 0 || len(b.blocks[k-1]) == cap(b.blocks[k-1]) {
		b.grow()
		k = len(b.blocks)
	}
	last := &b.blocks[k-1]
	t.bucket, t.slot = b, uint32((k-1)<<blockBits+len(*last))
	*last = append(*last, t)
	b.noteDue(t)
}

// take removes and returns the oldest timer not yet taken; b must not be
// empty. Nothing is added to a bucket while it is being flushed (see
// shard.flush), so taking from the front keeps the slots of the others valid.
func (b *bucket) take() *Timer {
	i := b.taken
	c := b.blocks[i>>blockBits]
	t := c[i&blockMask]
	c[i&blockMask] = nil
	b.taken++
	t.bucket = nil
	if b.empty() {
		b.reset()
	} else if b.taken&blockMask == 0 && i>>blockBits > 0 {
		// A block past the first is all taken: back to the pool now, for
		// the bucket the flush is filling (the first stays for b's next
		// rotation; see resetBlocks).
		b.shard.freeBlock(c)
		b.blocks[i>>blockBits] = nil
	}
	return t
}

// unlink removes t from the bucket it is in, if any, moving the bucket's last
// timer into its place. leaving says that t leaves the wheel (stopped or
// collected) rather than being filed again at once (Reset), which would set
// the alarm for its new bucket anyway (see retire).
func (t *Timer) unlink(leaving bool) {
	b := t.bucket
	if b == nil {
		return
	}
	k := len(b.blocks) - 1
	last := b.blocks[k]
	end := len(last) - 1
	if moved := last[end]; moved != t {
		b.blocks[t.slot>>blockBits][t.slot&blockMask], moved.slot = moved, t.slot
	}
	last[end] = nil
	b.blocks[k] = last[:end]
	t.bucket = nil
	switch {
	case b.empty():
		b.reset()
		if b.expiration != noExpiration {
			b.retire(leaving) // one being flushed is released by its flush
		}
	case end == 0:
		b.dropLastBlock() // not the first: b is not empty
	}
	if !b.empty() && b.nearExpiration(t.due) {
		b.retarget()
	}
}

// retargetMax is the most timers a bucket may hold for retarget to look at
// them: a bucket's expiration is the earliest due tick of the timers put in
// it (see insertLocked), and when the timer that set it leaves, a small
// bucket moves its expiration on to the earliest of the others (found by a
// scan, which serves the next retargets too: see nearest), so that the
// poller does not wake at a tick where nothing is due. A big bucket keeps
// the stale, early expiration: scanning it at every Stop would cost O(n) a
// Stop when timers are stopped in the order they are due (as a server's
// request deadlines are), and the one early wake-up is shared by all of its
// timers. A wake-up costs the process tens of microseconds; a scan of 128
// timers, well under one.
// 128: half the poller's wake-ups of 32 in the net/http server at 300
// connections, for the same CPU (docs/design/retarget.md).
const retargetMax = 128

// retarget moves b's expiration on to the earliest due tick of its timers,
// after a timer near the expiration left or was moved later (see
// nearExpiration), if b is queued, on a coarse level (on level 0 every timer of a bucket is due at
// its expiration) and holds at most retargetMax timers; if they are all due
// after b's slot, it files them elsewhere and releases b.
func (b *bucket) retarget() {
	n := b.end() - int(b.taken)
	if b.level() == 0 || b.expiration == noExpiration || n == 0 || n > retargetMax {
		return
	}
	// Never past the last tick of b's slot, which holds the old
	// expiration: a timer Reset to later stays in its bucket (see holds)
	// with a due tick maybe far past it, and a bucket still queued once the
	// current slot has moved past its own would be shared with the next
	// rotation of its slot, and the flush would file timers back into the
	// bucket it is emptying.
	w := b.shard.wheel
	shift := uint(b.level()) * w.bits
	end := (b.expiration>>shift+1)<<shift - 1
	var first int64
	if n == 1 { // itself: no list to make for a timer alone, as a lone idle timeout is
		first = b.blocks[b.taken>>blockBits][b.taken&blockMask].due
	} else {
		first = b.earliest()
	}
	switch {
	case first <= b.expiration:
	case first <= end:
		b.expiration = first
		w.queue.Offer(b, w.startOf(first)) // moves it
	default:
		// Every timer left was Reset past b's slot, as idle timeouts
		// re-armed on every read are: file them where their due ticks
		// say now, rather than wake the poller at the slot's end to do it
		// (none lands in b again: b's slot is not behind the current one).
		b.refile()
	}
}

// nearExpiration reports whether the tick due is at most b's slack after
// b's expiration: an eighth of the ticks from its shard's time to the
// expiration. Only a timer that near, leaving b or moving later in it, can
// have been b's earliest, and a Reset that moves a timer within the slack
// leaves b's expiration where it is, to be retargeted by a later Reset or
// Stop. So a queued bucket's expiration is early by at most an eighth of the
// time it had to go when a timer last moved in it, and a bucket left early
// is flushed early at most once: the flush files each timer by its due
// tick. The wheel's alarm is early in the same way (see delayqueue's
// lazy.go), so a timer alone on its wheel, re-armed on every call as an
// idle timeout is, moves neither its bucket nor the alarm on most Resets:
// at a 2 h horizon, not until it has moved 15 minutes.
func (b *bucket) nearExpiration(due int64) bool {
	return due-b.expiration <= (b.expiration-b.shard.currentTick)>>3
}

// refile moves every timer of b, queued, to the bucket its due tick calls
// for, and releases b. Callers hold the shard's mu.
func (b *bucket) refile() {
	s := b.shard
	for _, c := range b.blocks { // taken is 0: b is queued, not being flushed
		for i, t := range c {
			c[i] = nil
			t.bucket = nil
			s.insertLocked(t) // not due: its due tick is past b's slot
		}
	}
	b.reset()
	b.withdraw()
}

// retire gives up on b, queued and emptied before it is due, so that the
// poller is not woken for it: it leaves b vacant, still queued, if b is not
// the queue's head and its shard may keep one more vacant bucket, and
// withdraws it otherwise. A vacant bucket that reaches the head is dropped
// by the queue before the alarm is armed for it (see dropVacant).
func (b *bucket) retire(leaving bool) {
	s := b.shard
	w := s.wheel
	if cap(b.blocks) > 1 || len(b.blocks) == 1 && cap(b.blocks[0]) > vacantCap {
		if len(b.blocks) > 0 {
			s.freeBlock(b.blocks[0])
		}
		b.blocks = nil
	}
	if b.near != nil { // to a bucket that has timers to scan
		s.keepNear(b.near)
		b.near = nil
	}
	// At the head the alarm may be set for b already. An exact alarm is
	// moved on by Remove; an early one is moved on by RemoveHead the first
	// time a head at b's expiration is emptied by a timer leaving the wheel,
	// and otherwise stays (see delayqueue's lazy.go), so b stays queued too,
	// vacant, for the ring that alarm was set for, or a caller's advance, to
	// take and release, unless a timer lands in it first. If b becomes the
	// head after this look, the queue asks the shard (see dropVacant), which
	// then holds b vacant.
	if leaving && w.queue.RemoveHead(b, w.startOf(b.expiration)) {
		// The head, and the first emptied at its expiration: the queue
		// moved the alarm on to the next head, so nothing rings for b. Not
		// for a timer filed again at once: its new bucket sets the alarm
		// if it is earlier, and moving it later first would set it twice.
		b.expiration = noExpiration
		s.release(b)
		return
	}
	if w.queue.Early() {
		// Where the shard may keep no more vacant buckets (vacantFit), the
		// oldest go, not b: timers armed and stopped in turn land in b's
		// slot now, no longer in the older ones, and would otherwise pay
		// a withdrawal and an Offer each. At most two go (each takes one
		// from the vacant and one from the buckets).
		for s.vacant.n > 0 && !s.vacantFit(s.vacant.n+1) {
			s.vacant.oldest().withdraw()
		}
	}
	if !s.vacantFit(s.vacant.n+1) || !w.queue.Early() && w.startOf(b.expiration) <= w.queue.Next() {
		b.withdraw()
		return
	}
	s.vacant.push(b)
}

// vacantCap bounds the array a vacant bucket keeps for the timer that may
// land in it again: 8 pointers (64 B), so that a vacant bucket holds at most
// 152 B (with its table of one block, 24 B).
const vacantCap = 8

// withdraw takes b, emptied before it is due and queued or vacant, out of
// the delay queue, so that the poller is not woken for it, and releases it,
// so that it holds no memory.
func (b *bucket) withdraw() {
	s := b.shard
	s.wheel.queue.Remove(b) // nothing to do for one the queue dropped
	b.expiration = noExpiration
	s.release(b)
}

// unlistVacant takes b out of its shard's vacant list, if it is there.
// Callers hold the shard's mu.
func (s *shard) unlistVacant(b *bucket) { s.vacant.remove(b) }

// reset readies an emptied bucket for its next rotation (or, released, for
// its reuse: see shard.free), keeping its list of earliest timers, emptied,
// so that small buckets emptied and filled again by random Resets do not
// allocate one for every rotation.
func (b *bucket) reset() {
	b.taken = 0
	if n := b.near; n != nil {
		n.forget()
	}
	b.resetBlocks()
	b.shard.trimBlocks()
}

// detachAll takes every timer out of b and releases b's storage.
func (b *bucket) detachAll() {
	for t := range b.all {
		t.bucket = nil
	}
	b.blocks, b.taken, b.near = nil, 0, nil
	b.expiration = noExpiration
}
