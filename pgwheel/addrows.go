package pgwheel

import (
	"context"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
)

// maxAddRows bounds the tasks one add statement writes (its arrays, the
// rows it locks), so that a statement's work stays bounded; a longer call
// runs several, in its one transaction. The Queue sends at most 1,024
// requests per Store.Add (durable's maxCoalesced): two statements. Not a
// tuned figure, a cap: what pays is one statement per batch instead of one
// per task (bench/sqlbench's AddBatch of 100: from 9-12k to 40-45k adds/s,
// docs/bench/sql.md).
const maxAddRows = 512

// addRowsSQL is addSQL for many tasks in one statement: $1 namespace, then
// one array per column of addSQL's scalar arguments ($2 keys, $3 absolute
// due times, NULL for a relative one, $4 delays in ms, $5 payloads, $6..$10
// the policies). It reads the clock once for all its rows, and sends at
// most one wake-up, for its earliest stored task when no scheduled task the
// statement sees is due at or before it (as addNotify decides for one
// task: a worker already waits for any earlier one). It returns one row per
// task it stored: key, due time in Unix ms, and whether the wake-up
// announced it. A key twice in the arrays is stored once, from its first
// occurrence (ON CONFLICT DO NOTHING skips the later one). If this changes,
// adjust listen.go.
const addRowsSQL = `WITH c AS MATERIALIZED (SELECT * FROM pgwheel_clock()),
	s AS (
		INSERT INTO pgwheel_task AS t ` + addColumns + `
		SELECT $1::text, v.key, 'due', d.due, v.payload, length(v.payload), c.now, d.due,
			v.type, v.timeout_ms, v.max_attempts, v.backoff_base_ms, v.backoff_limit_ms
		FROM c, unnest($2::text[], $3::timestamptz[], $4::bigint[], $5::bytea[], $6::text[], $7::bigint[],
				$8::integer[], $9::bigint[], $10::bigint[]) WITH ORDINALITY
			AS v(key, at, delay_ms, payload, type, timeout_ms, max_attempts, backoff_base_ms, backoff_limit_ms, ord),
			LATERAL (SELECT CASE
				WHEN v.at IS NOT NULL THEN v.at
				WHEN v.delay_ms > 0 THEN c.now_up + v.delay_ms * interval '1 millisecond'
				ELSE c.now END AS due) d
		ORDER BY v.ord
		ON CONFLICT (namespace, key) DO NOTHING
		RETURNING t.key, t.at),
	e AS (SELECT min(at) AS at FROM s),
	n AS (
		SELECT pg_notify('pgwheel', ` + "(extract(epoch FROM e.at) * 1000)::bigint || ' ' || $1::text" + `)
		FROM e
		WHERE e.at IS NOT NULL AND NOT EXISTS (SELECT 1 FROM pgwheel_task o
			WHERE o.namespace = $1::text AND o.place = 'due' AND o.at <= e.at))
	SELECT s.key, (extract(epoch FROM s.at) * 1000)::bigint, s.at = e.at AND (SELECT count(*) FROM n) > 0
	FROM s, e`

// addRows adds tasks whose arguments addArgs made (modeAdd), maxAddRows per
// statement, on tx, and returns one Added per task, in order. A key that
// appears again after its first task gets AddExists.
func (s *Store) addRows(ctx context.Context, tx pgx.Tx, args [][]any) ([]Added, error) {
	return s.addRowsOn(ctx, tx, args)
}

// rowsQuerier runs one statement returning rows: a pgx.Tx, or the pool
// for a statement that is a transaction by itself.
type rowsQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// addRowsOn is addRows on q, which must be a transaction unless args fit
// one statement (at most maxAddRows).
func (s *Store) addRowsOn(ctx context.Context, q rowsQuerier, args [][]any) ([]Added, error) {
	out := make([]Added, len(args))
	for lo := 0; lo < len(args); lo += maxAddRows {
		part := args[lo:min(lo+maxAddRows, len(args))]
		if err := s.addRowsPart(ctx, q, part, out[lo:lo+len(part)]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// addRowsPart runs addRowsSQL for args, setting out[i] for args[i].
func (s *Store) addRowsPart(ctx context.Context, q rowsQuerier, args [][]any, out []Added) error {
	n := len(args)
	keys, delays, payloads, types := make([]string, n), make([]int64, n), make([][]byte, n), make([]string, n)
	ats := make([]pgtype.Timestamptz, n)
	timeouts, maxAttempts, bases, limits := make([]int64, n), make([]int32, n), make([]int64, n), make([]int64, n)
	at := make(map[string]int, n) // a key's first task
	for i, a := range args {
		keys[i] = a[1].(string)
		if t, ok := a[2].(time.Time); ok {
			ats[i] = pgtype.Timestamptz{Time: t, Valid: true}
		}
		delays[i], payloads[i], types[i] = a[3].(int64), a[4].([]byte), a[5].(string)
		timeouts[i], maxAttempts[i], bases[i], limits[i] = a[6].(int64), int32(a[7].(int)), a[8].(int64), a[9].(int64)
		if _, ok := at[keys[i]]; !ok {
			at[keys[i]] = i
		}
		out[i] = Added{Status: durable.AddExists}
	}
	rows, err := q.Query(ctx, addRowsSQL, s.namespace, keys, ats, delays, payloads, types,
		timeouts, maxAttempts, bases, limits)
	if err != nil {
		return fmt.Errorf("pgwheel: add: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var key string
		var due int64
		var notified bool
		if err := rows.Scan(&key, &due, &notified); err != nil {
			return fmt.Errorf("pgwheel: add: %w", err)
		}
		i, ok := at[key]
		if !ok {
			return fmt.Errorf("pgwheel: add: the database stored key %q it was not given", key)
		}
		out[i] = Added{Status: durable.AddStored, Due: fromMillis(due), Notified: notified}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("pgwheel: add: %w", err)
	}
	return nil
}
