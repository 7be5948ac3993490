package pgwheel

import (
	"context"
	"fmt"
)

// Pause is durable.Store's Pause: pause or resume.
func (s *Store) Pause(ctx context.Context, paused bool) error {
	if paused {
		return unavailable(s.pause(ctx))
	}
	return unavailable(s.resume(ctx))
}

// pause stops claims on the namespace until Resume: Claim still reaps
// expired leases but leases nothing. Adds, cancels and settles go on.
func (s *Store) pause(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO pgwheel_queue (namespace, paused) VALUES ($1, true)
		ON CONFLICT (namespace) DO UPDATE SET paused = true`, s.namespace)
	if err != nil {
		return schemaMissing(fmt.Errorf("pgwheel: pause: %w", err))
	}
	return nil
}

// resume lets claims lease again, and wakes idle workers (at commit) with
// the earliest due time, if any task is due.
func (s *Store) resume(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, `WITH r AS (
		UPDATE pgwheel_queue SET paused = false WHERE namespace = $1 RETURNING namespace)
	SELECT pg_notify('pgwheel', (extract(epoch FROM min(t.at)) * 1000)::bigint || ' ' || $1)
	FROM pgwheel_task t WHERE t.namespace = $1 AND t.place = 'due' AND EXISTS (SELECT 1 FROM r)
	HAVING min(t.at) IS NOT NULL`, s.namespace)
	if err != nil {
		return schemaMissing(fmt.Errorf("pgwheel: resume: %w", err))
	}
	return nil
}
