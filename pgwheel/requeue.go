package pgwheel

import (
	"context"
	"fmt"
)

// Requeue is durable.Store's Requeue.
func (s *Store) Requeue(ctx context.Context, key string) (requeued bool, due int64, err error) {
	requeued, due, err = s.requeue(ctx, key)
	return requeued, due, unavailable(err)
}

// requeue moves a dead task back to due at once (by the database clock)
// with fresh attempts and postponements; its last error and log stay. It
// reports whether the key was dead and its new due time (Unix ms), and wakes idle workers as an Add does.
func (s *Store) requeue(ctx context.Context, key string) (requeued bool, due int64, err error) {
	if err := checkKey(key); err != nil {
		return false, 0, err
	}
	var notified bool
	err = s.pool.QueryRow(ctx, `WITH s AS (
		UPDATE pgwheel_task t SET place = 'due', at = c.now, attempts = 0, postponements = 0, unconfirmed = 0
		FROM pgwheel_clock() c
		WHERE t.namespace = $1 AND t.key = $2 AND `+placeOnly+` = 'dead'
		RETURNING t.at),`+addNotify, s.namespace, key).Scan(&due, &notified)
	if err != nil {
		return false, 0, schemaMissing(fmt.Errorf("pgwheel: requeue %q: %w", key, err))
	}
	return due >= 0, due, nil
}
