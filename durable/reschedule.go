package durable

import (
	"context"
	"fmt"
	"time"
)

// Reschedule moves the scheduled or retrying task under key to be delivered
// once the store's clock reaches at, rounded up to the millisecond (a past at is
// due at once), and reports whether it did. The payload is not sent again;
// attempts, last error and the original due time (TaskInfo.OriginalDue,
// Task.OriginalDue: the time Add or Replace gave) stay as they are; Get
// reports at as Due. An earlier time wakes this Queue's idle Runs, as Add
// does.
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
	res, err := q.store.Reschedule(ctx, key, ms)
	if err != nil {
		return false, err
	}
	switch res {
	case RescheduleMoved:
		q.wake(ms)
		return true, nil
	case RescheduleMissing:
		return false, nil
	case RescheduleInFlight:
		return false, fmt.Errorf("%w: %q", ErrInFlight, key)
	}
	return false, fmt.Errorf("durable: reschedule %q: unexpected result %d", key, res)
}
