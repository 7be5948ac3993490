package pgwheel

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// MaxListLimit bounds one List page.
const MaxListLimit = 1000

// List pages through the tasks in state, ordered by their time in that
// state (due time, lease end, death, end of retention), then key, from the
// position cursor ("" for the start); next is "" after the last page. The
// cursor is a position (keyset pagination on the index pgwheel_task_place_at):
// a task that stays put is listed exactly once whatever changes around it;
// one that moves may be listed twice or not at all. Each page is one
// snapshot.
func (s *Store) List(ctx context.Context, state State, cursor string, limit int) (tasks []TaskInfo, next string, err error) {
	place, filter := "", ""
	switch state {
	case StateScheduled:
		place, filter = "due", "AND t.attempts = 0 AND t.last_error = ''"
	case StateRetrying:
		place, filter = "due", "AND (t.attempts > 0 OR t.last_error <> '')"
	case StateInFlight:
		place = "lease"
	case StateDead:
		place = "dead"
	case StateDone:
		place, filter = "kept", "AND coalesce(r.state, 'done') = 'done'"
	case StateCancelled:
		place, filter = "kept", "AND r.state = 'cancelled'"
	default:
		return nil, "", fmt.Errorf("%w: list: unknown state %q", ErrArgument, state)
	}
	if limit < 1 || limit > MaxListLimit {
		return nil, "", fmt.Errorf("%w: list: limit %d (want 1..%d)", ErrArgument, limit, MaxListLimit)
	}
	afterAt, afterKey, err := parseCursor(cursor)
	if err != nil {
		return nil, "", err
	}
	err = s.inTx(ctx, snapshotTx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT t.key, t.at FROM pgwheel_task t
			LEFT JOIN pgwheel_result r USING (namespace, key)
			WHERE t.namespace = $1 AND t.place = $2 AND (t.at, t.key) > ($3, $4) `+filter+`
			ORDER BY t.at, t.key LIMIT $5`, s.namespace, place, afterAt, afterKey, limit+1)
		if err != nil {
			return err
		}
		var keys []string
		var last time.Time
		for rows.Next() {
			var k string
			if err := rows.Scan(&k, &last); err != nil {
				rows.Close()
				return err
			}
			keys = append(keys, k)
			if len(keys) == limit {
				next = formatCursor(last, k)
			}
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if len(keys) <= limit {
			next = "" // no row past this page
		} else {
			keys = keys[:limit]
		}
		tasks, err = s.infos(ctx, tx, keys)
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("pgwheel: list %s: %w", state, err)
	}
	return tasks, next, nil
}

// A cursor is "<at, Unix µs>|<key>".
func formatCursor(at time.Time, key string) string {
	return strconv.FormatInt(at.UnixMicro(), 10) + "|" + key
}

func parseCursor(c string) (pgtype.Timestamptz, string, error) {
	if c == "" {
		return pgtype.Timestamptz{InfinityModifier: pgtype.NegativeInfinity, Valid: true}, "", nil // before every time
	}
	us, key, ok := strings.Cut(c, "|")
	n, err := strconv.ParseInt(us, 10, 64)
	if !ok || err != nil {
		return pgtype.Timestamptz{}, "", fmt.Errorf("%w: list cursor %q", ErrArgument, c)
	}
	return pgtype.Timestamptz{Time: time.UnixMicro(n), Valid: true}, key, nil
}
