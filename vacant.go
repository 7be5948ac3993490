package timingwheel

// How the delay queue drops vacant buckets (see bucket): a Stop that empties
// a bucket leaves it queued, touching nothing the queue shares; the queue
// asks about each bucket that becomes its head before arming the alarm for
// it, and drops it if it is vacant, so no alarm is set for it.
//
// The queue asks with its own lock held, and the lock order is a shard's
// lock, then the queue's: so it may only try the shard's lock. When another
// goroutine holds it, the queue sets the shard's recheck flag and tries once
// more; if that fails too, it arms the alarm for the head, and the holder,
// which reads the flag after it unlocks (see unlock), asks the queue again
// holding the lock (Recheck), before the alarm rings unless the head was
// already due. The flag is set before the second try and read after the
// unlock, both atomic: either the try finds the lock free or the holder
// finds the flag set. (Should both miss, which the memory model allows
// where the mutex's try reads its state without a barrier, the poller wakes
// once for an empty bucket, takes it and releases it: a wake-up, never a
// lost or early timer.)

// dropVacant is the delay queue's DropIf: it reports whether b, becoming
// the queue's head, is vacant, and if so notes that the queue drops it.
// Called with the queue's lock held: it may not call the queue, nor wait for
// b's shard.
func dropVacant(b *bucket) bool {
	s := b.shard
	if !s.mu.TryLock() {
		s.recheck.Store(true)
		if !s.mu.TryLock() {
			return false // the holder asks again (see unlock)
		}
	}
	// Both locks held: no call of the queue can set the flag meanwhile, and
	// the question it stood for is being answered for the head now.
	s.recheck.Store(false)
	drop := s.dropLocked(b)
	s.mu.Unlock() // not unlock: the queue's lock is held
	return drop
}

// dropLocked reports whether b, becoming the queue's head, is vacant, and
// if so marks it out of the queue. Callers hold s.mu and the queue's lock.
func (s *shard) dropLocked(b *bucket) bool {
	if b.vacant == 0 {
		return false
	}
	b.expiration = noExpiration // dropped; still vacant, in its level
	return true
}

// unlock unlocks s.mu and then, if the queue could not tell meanwhile
// whether its head is a vacant bucket of s, asks it again (see recheckOwed).
// Every unlock of a shard's mu is this one, but dropVacant's and
// unlockAll's, and AfterFunc's, Stop's and the common Reset's, which write
// it out: a call there is too big to inline and shows in AfterFunc+Stop
// (docs/design/vacant.md).
func (s *shard) unlock() {
	s.mu.Unlock()
	if s.recheck.Load() { // the one load every unlock pays, on mu's cache line
		s.recheckOwed()
	}
}

// recheckOwed asks the queue again about its head, holding s.mu, while the
// queue has set recheck. The caller holds no shard's lock: it takes s.mu.
func (s *shard) recheckOwed() {
	for s.recheck.Load() {
		s.mu.Lock()
		// Cleared before the queue is asked, under its lock, about its head
		// now: a flag set after that is for a later head, read below.
		s.recheck.Store(false)
		s.wheel.queue.Recheck(func(b *bucket) bool {
			if b.shard == s {
				return s.dropLocked(b)
			}
			return dropVacant(b)
		})
		s.mu.Unlock()
	}
}
