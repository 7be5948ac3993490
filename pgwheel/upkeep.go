package pgwheel

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// The upkeep: a Run vacuums pgwheel_task itself when a burst ends, instead
// of leaving the burst's dead index entries to autovacuum.
//
// Every task leased leaves a dead entry at the head of its namespace's due
// range (pgwheel_task_due), where the next claims' scans start, and nothing
// but a vacuum removes it: new entries go to the range's tail, and a B-tree
// frees a page's dead entries only when an insert fills that page. With
// 150,000 tasks pushed through beside a backlog of 500,000, the claim's
// scan read 4 pages before and 970–2,834 after, until autovacuum came 14 s
// to over a minute later (autovacuum_naptime is server-wide, 1 min by
// default); with this upkeep, within 2× at once or 1.1 s after
// (docs/design/pg-churn.md, "Old and new in one run"). No layout short of truncating tables avoids the
// dead entries (a lease table, HOT claims and partial indexes all leave one
// per task in the ordered index the claims walk).
//
// So when a claim finds its namespace's due range drained (it leased fewer
// than its limit) after the Store's claims leased at least vacuumAfter
// tasks since the last vacuum, it asks the Run's upkeep goroutine (started
// with the Run's own connections, in Notify) to run
// VACUUM (INDEX_CLEANUP ON, SKIP_LOCKED, TRUNCATE OFF) pgwheel_task: it
// skips the table if another vacuum holds it, never takes the lock that
// would stop writers, and removes every dead entry whatever their share of
// the table (INDEX_CLEANUP ON: AUTO skips the index pass below 2% of the
// pages). One process of those sharing a database vacuums at a time
// (vacuumLock, tried, never waited for). A vacuum reads the pages changed
// since the last and each index whole: 0.3 s at a million tasks. The next
// may start vacuumPause after, or ten times the last one's duration if
// longer, so upkeep takes at most a tenth of one server process's time.
//
// Only the table's owner may vacuum it: for another role PostgreSQL skips
// the table with a warning, and autovacuum (migration 3's thresholds) is
// what remains.
const (
	vacuumPause = 10 * time.Second
	vacuumLock  = 0x7067766163 // "pgvac" in ASCII
)

// vacuumAfter is the tasks leased since the last vacuum that make a drained
// claim ask for one: their dead entries, about 100 to an index page, make
// a claim read 100 pages more (about 0.1 ms). A variable for the tests.
var vacuumAfter int64 = 10_000

// upkeep is a Store's vacuum state, shared by its Runs.
type upkeep struct {
	leased atomic.Int64  // tasks leased since the last vacuum began
	kick   chan struct{} // a drained claim's request; capacity 1
}

func newUpkeep() upkeep { return upkeep{kick: make(chan struct{}, 1)} }

// countLeased counts n tasks a claim leased, and asks for a vacuum when the
// claim drained the due range (drained) after enough of them.
func (s *Store) countLeased(n int, drained bool) {
	if s.up.leased.Add(int64(n)) >= vacuumAfter && drained {
		select {
		case s.up.kick <- struct{}{}:
		default:
		}
	}
}

// runUpkeep vacuums on pool's connections when asked, until ctx ends. Its
// errors go to report.
func (s *Store) runUpkeep(ctx context.Context, pool *pgxpool.Pool, report func(error)) {
	var next time.Time // no vacuum before
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.up.kick:
		}
		if wait := time.Until(next); wait > 0 {
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
		}
		if s.up.leased.Load() < vacuumAfter {
			continue
		}
		s.up.leased.Store(0)
		start := time.Now()
		if err := vacuum(ctx, pool); err != nil && ctx.Err() == nil {
			report(err)
		}
		next = time.Now().Add(max(vacuumPause, 10*time.Since(start)))
	}
}

// vacuum runs the upkeep's VACUUM unless another process's upkeep holds
// vacuumLock.
func vacuum(ctx context.Context, pool *pgxpool.Pool) error {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgwheel: upkeep: %w", err)
	}
	defer conn.Release()
	var mine bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, int64(vacuumLock)).Scan(&mine); err != nil {
		return fmt.Errorf("pgwheel: upkeep: %w", err)
	}
	if !mine {
		return nil
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, int64(vacuumLock)) //nolint:errcheck // the session's end releases it too
	if _, err := conn.Exec(ctx, `VACUUM (INDEX_CLEANUP ON, SKIP_LOCKED, TRUNCATE OFF) pgwheel_task`); err != nil {
		return fmt.Errorf("pgwheel: upkeep: vacuum: %w", err)
	}
	return nil
}
