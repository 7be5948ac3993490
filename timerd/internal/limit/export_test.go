package limit

import "time"

// SetClock makes l read the time from now, for tests.
func (l *Limiter) SetClock(now func() time.Time) { l.now = now }

// Buckets is how many buckets l keeps.
func (l *Limiter) Buckets() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// SetMaxClients lowers l's cap on buckets, for tests.
func (l *Limiter) SetMaxClients(n int) { l.cap = n }
