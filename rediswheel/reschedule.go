package rediswheel

import (
	"context"
	"fmt"
	"time"
)

// Reschedule moves the scheduled or retrying task under key to be delivered
// once Redis's clock reaches at, rounded up to the millisecond (a past at is
// due at once), and reports whether it did. The payload is not sent again;
// attempts and last error stay as they are; Get reports at as the new
// OriginalDue, and so do later deliveries' Task.OriginalDue. An earlier time
// wakes this Queue's idle Runs, as Add does.
//
// It returns false, changing nothing, for a key that is absent, dead (see
// Requeue) or finished and retained; for a task in flight it returns false
// and an error wrapping ErrInFlight, as Replace does: its time is decided
// by how its delivery ends.
func (q *Queue) Reschedule(ctx context.Context, key string, at time.Time) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	ms := unixMilliCeil(at)
	n, err := rescheduleScript.Run(ctx, q.client, q.keys[q.shard(key)], key, ms).Int64()
	if err != nil {
		return false, fmt.Errorf("rediswheel: reschedule %q: %w", key, err)
	}
	switch n {
	case 1:
		q.wake(ms)
		return true, nil
	case 0:
		return false, nil
	case 2:
		return false, fmt.Errorf("%w: %q", ErrInFlight, key)
	}
	return false, fmt.Errorf("rediswheel: reschedule %q: unexpected reply %d", key, n)
}
