package pgwheel

import (
	"context"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Reschedule is durable.Store's Reschedule.
func (s *Store) Reschedule(ctx context.Context, key string, at int64) (durable.RescheduleResult, error) {
	r, err := s.reschedule(ctx, key, time.UnixMilli(at))
	return r, unavailable(err)
}

// reschedule moves a scheduled or retrying task to at (rounded up to the
// millisecond), keeping its payload, attempts, last error and original due
// time (Add's or Replace's). An earlier due time wakes idle workers as an
// Add does.
func (s *Store) reschedule(ctx context.Context, key string, at time.Time) (durable.RescheduleResult, error) {
	return s.rescheduleOn(ctx, s.pool, key, at)
}

// rescheduleOn is reschedule's one statement on q: the pool, or the
// caller's transaction (RescheduleTx).
func (s *Store) rescheduleOn(ctx context.Context, q rowQuerier, key string, at time.Time) (durable.RescheduleResult, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	if at.IsZero() {
		return 0, fmt.Errorf("%w: reschedule %q: zero time", ErrArgument, key)
	}
	var due int64
	var notified bool
	var place *string
	err := q.QueryRow(ctx, `WITH cur AS (
		SELECT place FROM pgwheel_task WHERE namespace = $1 AND key = $2),
	s AS (
		UPDATE pgwheel_task SET at = $3
		WHERE namespace = $1 AND key = $2 AND `+placeOnly+` = 'due'
		RETURNING at),`+addNotify+`, (SELECT place FROM cur)`, s.namespace, key, timeCeil(at)).Scan(&due, &notified, &place)
	if err != nil {
		return 0, schemaMissing(fmt.Errorf("pgwheel: reschedule %q: %w", key, err))
	}
	switch {
	case due >= 0:
		return durable.RescheduleMoved, nil
	case place != nil && *place == "lease":
		return durable.RescheduleInFlight, nil
	}
	return durable.RescheduleMissing, nil
}
