package timingwheel

import "time"

// Hooks into the wheel for tests that drive it themselves.

// newManual is New without the poller: nothing expires until the test calls
// step (or, without WithInlineCallbacks, until a caller finds a bucket due).
func newManual(tick time.Duration, wheelSize int, opts ...Option) (*TimingWheel, error) {
	tw, err := build(tick, wheelSize, opts)
	if err != nil {
		return nil, err
	}
	close(tw.done) // Stop waits for no poller
	return tw, nil
}

// step advances the wheel through everything due now, as the poller would.
func (tw *TimingWheel) step() {
	tw.adv.mu.Lock()
	defer tw.adv.mu.Unlock()
	// A flush that files timers back into the bucket it is emptying would
	// loop here for ever: fail instead, after far more rounds than any test
	// needs (each moves up to a chunk of timers).
	for rounds := 0; tw.advanceLocked(tw.queue.Now(), chunk); rounds++ {
		if rounds == 1_000_000 {
			panic("timingwheel test: step did not finish: the wheel keeps finding work due")
		}
	}
}

// idle reports whether nothing is due at the clock's time and nobody is
// advancing the wheel: a wheel driven by a FakeClock has then done all it
// will do until the clock moves.
func (tw *TimingWheel) idle() bool {
	if tw.queue.Next() <= tw.queue.Now() || !tw.adv.mu.TryLock() {
		return false
	}
	defer tw.adv.mu.Unlock()
	return tw.adv.flushing == nil
}

// currentTick returns the current tick of t's shard.
func (t *Timer) currentTick() int64 {
	s := t.owner.shard
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.currentTick
}

// maxCurrentTick returns the latest current tick of any shard.
func (tw *TimingWheel) maxCurrentTick() int64 {
	tw.lockAll()
	defer tw.unlockAll()
	var m int64
	for i := range tw.shards {
		m = max(m, tw.shards[i].currentTick)
	}
	return m
}

// oneShard makes every later timer of tw land in its first shard, for tests
// about what happens inside one shard's buckets.
func oneShard(tw *TimingWheel) *TimingWheel {
	tw.shardMask = 0
	return tw
}
