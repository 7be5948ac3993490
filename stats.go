package timingwheel

// Stats is a snapshot of a wheel's counters.
type Stats struct {
	Pending int    // timers that will fire unless stopped (Len)
	Fired   uint64 // expirations: AfterFunc callbacks handed over, values sent on C, runs of schedules
	Stopped uint64 // Stop calls that prevented a fire (not those that only discarded a value on C)
	Dropped uint64 // timers pending when the wheel stopped
	Wakeups uint64 // times the poller woke from a sleep
	Levels  int    // levels created so far (level 0 counts once a timer needed it)
}

// Stats returns the wheel's counters.
func (tw *TimingWheel) Stats() Stats {
	tw.mu.Lock()
	defer tw.mu.Unlock()
	return Stats{
		Pending: tw.pending,
		Fired:   tw.fired,
		Stopped: tw.stoppedCount,
		Dropped: tw.dropped,
		Wakeups: tw.queue.Wakeups(),
		Levels:  len(tw.levels),
	}
}
