package rediswheel

import "time"

// durationMilliCeil is d in whole milliseconds rounded up, as durable rounds
// every delay (never early); 0 for d <= 0.
func durationMilliCeil(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++
	}
	return ms
}
