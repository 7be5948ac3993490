package memstore

import "time"

// instant is one reading of the store's clock, in Unix ms: now rounded
// down, and up.
type instant struct{ now, up int64 }

func (s *Store) read() instant {
	ns := s.clock().UnixNano()
	now := ns / 1e6
	if ns%1e6 == 0 {
		return instant{now, now}
	}
	return instant{now, now + 1}
}

// after is the deadline ms after the reading: now rounded up plus ms, so never
// before the call's time plus ms; a delay of 0 (or less) is now, at once.
func (c instant) after(ms int64) int64 {
	if ms <= 0 {
		return c.now
	}
	return c.up + ms
}

// millis is d in whole ms, rounded up (a deadline or policy is never
// shortened); 0 for d <= 0.
func millis(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++
	}
	return ms
}

// msTime is the time of a stored ms, the zero time for 0 (unset).
func msTime(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms)
}

// msDuration is ms milliseconds.
func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }
