package pgwheel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/jackc/pgx/v5"
)

// NewTask is one task to add. Its due time is At when At is not zero
// (rounded up to the millisecond), otherwise After from the database clock
// at the statement that stores it (rounded up; After <= 0 is at once).
type NewTask struct {
	Key     string
	Payload []byte
	At      time.Time
	After   time.Duration
	Policy  durable.Policy // as Queue.Add's task options store it
}

// Added is the result of adding one task.
type Added struct {
	Status durable.AddStatus
	Due    time.Time // the stored due time; zero unless Stored
	// Notified reports that the add sent a wake-up (see Listener): the task
	// is due no later than every other scheduled task of the namespace.
	Notified bool
}

// addMode is how an add treats an existing key.
type addMode int

const (
	modeAdd     addMode = iota // idempotent: an existing key, in any state, is left alone
	modeReplace                // rewrite any task not in flight, which starts over
)

// The add statements take $1 namespace, $2 key, $3 absolute due time (NULL
// for a relative one), $4 delay ms, $5 payload, $6..$10 the policy, and
// return the stored due time as Unix ms (-1 when not stored) and whether a
// wake-up was sent. They read the clock with pgwheel_clock (clock_timestamp:
// the statement's time, not the transaction's start) and use only scalar
// parameters, so database/sql drivers can run them too.
const addValues = `
	SELECT $1::text, $2::text, 'due', d.due, $5::bytea, length($5::bytea), c.now, d.due,
		$6::text, $7::bigint, $8::integer, $9::bigint, $10::bigint
	FROM pgwheel_clock() c, LATERAL (SELECT CASE
		WHEN $3::timestamptz IS NOT NULL THEN $3::timestamptz
		WHEN $4::bigint > 0 THEN c.now_up + $4::bigint * interval '1 millisecond'
		ELSE c.now END AS due) d`

const addColumns = `(namespace, key, place, at, payload, payload_size, added, original_due,
		type, timeout_ms, max_attempts, backoff_base_ms, backoff_limit_ms)`

// addNotify wakes idle workers (NOTIFY pgwheel, payload "<due ms> <namespace>")
// when the stored task is due no later than every scheduled task the
// statement sees: a worker already waits for any earlier one. PostgreSQL
// delivers the notification at commit, so a rolled-back add wakes nobody.
// If this changes, adjust listen.go.
const addNotify = `
	n AS (
		SELECT pg_notify('pgwheel', ` + "(extract(epoch FROM s.at) * 1000)::bigint || ' ' || $1::text" + `)
		FROM s
		WHERE NOT EXISTS (SELECT 1 FROM pgwheel_task o
			WHERE o.namespace = $1::text AND o.place = 'due' AND o.at <= s.at))
	SELECT ` + "coalesce((SELECT (extract(epoch FROM at) * 1000)::bigint FROM s), -1)" + `, (SELECT count(*) FROM n) > 0`

const addSQL = `WITH s AS (
	INSERT INTO pgwheel_task AS t ` + addColumns + addValues + `
	ON CONFLICT (namespace, key) DO NOTHING
	RETURNING t.at),` + addNotify

// replaceLockSQL locks the task before replaceSQL, so that replaceSQL's
// snapshot, taken after the lock, sees every delivery logged before it and
// deletes them all.
const replaceLockSQL = `SELECT 1 FROM pgwheel_task WHERE namespace = $1 AND key = $2 FOR UPDATE`

// replaceSQL: a replaced task starts over, as a new one: fresh attempts, no
// last error, history or result. A task in flight is never rewritten.
const replaceSQL = `WITH s AS (
	INSERT INTO pgwheel_task AS t ` + addColumns + addValues + `
	ON CONFLICT (namespace, key) DO UPDATE SET
		place = 'due', at = EXCLUDED.at, payload = EXCLUDED.payload, payload_size = EXCLUDED.payload_size,
		added = EXCLUDED.added, original_due = EXCLUDED.original_due, type = EXCLUDED.type,
		timeout_ms = EXCLUDED.timeout_ms, max_attempts = EXCLUDED.max_attempts,
		backoff_base_ms = EXCLUDED.backoff_base_ms, backoff_limit_ms = EXCLUDED.backoff_limit_ms,
		attempts = 0, token = NULL, cancel_requested = false, last_error = '', postponements = 0,
		unconfirmed = 0, delivery_attempt = NULL, started = NULL, worker = NULL
	WHERE t.place <> 'lease'
	RETURNING t.at),
	h AS (DELETE FROM pgwheel_delivery WHERE namespace = $1 AND key = $2 AND EXISTS (SELECT 1 FROM s)),
	r AS (DELETE FROM pgwheel_result WHERE namespace = $1 AND key = $2 AND EXISTS (SELECT 1 FROM s)),` + addNotify

// addArgs validates t and returns the add statements' arguments.
func (s *Store) addArgs(t NewTask) ([]any, error) {
	if err := checkKey(t.Key); err != nil {
		return nil, err
	}
	p := t.Policy
	if p.Type != "" {
		if err := checkText(p.Type, MaxKeyLen); err != nil {
			return nil, fmt.Errorf("%w: task type: %w", durable.ErrTaskOption, err)
		}
	}
	if p.Timeout < 0 || p.MaxAttempts < 0 || p.BackoffBase < 0 || p.BackoffLimit < 0 {
		return nil, fmt.Errorf("%w: negative task policy %+v", durable.ErrTaskOption, p)
	}
	var at any // NULL: relative
	if !t.At.IsZero() {
		at = timeCeil(t.At)
	}
	payload := t.Payload
	if payload == nil {
		payload = []byte{} // the column is NOT NULL: an empty payload is ""
	}
	return []any{s.namespace, t.Key, at, millisCeil(t.After), payload,
		p.Type, millisCeil(p.Timeout), p.MaxAttempts, millisCeil(p.BackoffBase), millisCeil(p.BackoffLimit)}, nil
}

// Add is durable.Store's Add: all the requests of the call in one
// transaction, so they commit together or fail together (sharing one
// error). The Queue sends only keys and task types that durable checked
// and each key once (see durable.Store's Add); for other callers, a
// request PostgreSQL cannot store (a key or task type with a NUL byte or
// invalid UTF-8) gets its own error, wrapping durable.ErrKey or
// durable.ErrTaskOption, and the others go on.
func (s *Store) Add(ctx context.Context, reqs []*durable.AddRequest) (earliest int64) {
	type write struct {
		r    *durable.AddRequest
		mode addMode
		args []any
	}
	writes := make([]write, 0, len(reqs))
	for _, r := range reqs {
		r.Status, r.Err = durable.AddExists, nil
		t := NewTask{Key: r.Key, Payload: r.Payload, Policy: r.Policy}
		if r.Relative {
			t.After = time.Duration(r.At) * time.Millisecond
		} else {
			t.At = time.UnixMilli(r.At)
		}
		args, err := s.addArgs(t)
		if err != nil {
			r.Err = fmt.Errorf("pgwheel: add %q: %w", r.Key, err)
			continue
		}
		mode := modeAdd
		if r.Replace {
			mode = modeReplace
		}
		writes = append(writes, write{r, mode, args})
	}
	earliest = -1
	out := make([]Added, len(writes))
	// Adds alone that fit one statement need no transaction: the statement
	// is one by itself, which spares the BEGIN and COMMIT round trips.
	var alone [][]any
	for _, w := range writes {
		if w.mode != modeAdd || len(writes) > maxAddRows {
			alone = nil
			break
		}
		alone = append(alone, w.args)
	}
	var err error
	switch {
	case len(writes) == 0:
	case len(alone) > 0:
		out, err = s.addRowsOn(ctx, s.pool, alone)
	default:
		err = s.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
			// Adds go as one statement over arrays, Replaces one by one (each
			// locks its row and deletes its history first): every key is
			// unique by now, so their order does not matter.
			var adds [][]any
			var at []int // adds[j] is writes[at[j]]
			for i, w := range writes {
				if w.mode == modeAdd {
					adds, at = append(adds, w.args), append(at, i)
					continue
				}
				a, err := s.addOne(ctx, tx, w.mode, w.args)
				if err != nil {
					return err
				}
				out[i] = a
			}
			added, err := s.addRows(ctx, tx, adds)
			if err != nil {
				return err
			}
			for j, a := range added {
				out[at[j]] = a
			}
			return nil
		})
	}
	err = unavailable(err) // once: the requests that failed together share it
	for i, w := range writes {
		switch {
		case err != nil:
			w.r.Err = schemaMissing(err)
		case out[i].Status == durable.AddStored:
			w.r.Status = durable.AddStored
			if due := out[i].Due.UnixMilli(); earliest < 0 || due < earliest {
				earliest = due
			}
		default:
			w.r.Status = out[i].Status
		}
	}
	return earliest
}

// rowQuerier runs one statement returning one row: pgx's Querier, or a
// database/sql transaction through sqlTx.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

type sqlTx struct{ tx *sql.Tx }

func (s sqlTx) QueryRow(ctx context.Context, q string, args ...any) pgx.Row {
	return s.tx.QueryRowContext(ctx, q, args...)
}

// addOne runs one task's add statements on q.
func (s *Store) addOne(ctx context.Context, q rowQuerier, mode addMode, args []any) (Added, error) {
	stmt := addSQL
	if mode == modeReplace {
		var one int
		err := q.QueryRow(ctx, replaceLockSQL, args[0], args[1]).Scan(&one)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) && !errors.Is(err, sql.ErrNoRows) {
			return Added{}, fmt.Errorf("pgwheel: replace %q: %w", args[1], err)
		}
		stmt = replaceSQL
	}
	var due int64
	var notified bool
	if err := q.QueryRow(ctx, stmt, args...).Scan(&due, &notified); err != nil {
		return Added{}, fmt.Errorf("pgwheel: add %q: %w", args[1], err)
	}
	a := Added{Due: fromMillis(due), Notified: notified}
	switch {
	case due >= 0:
		a.Status = durable.AddStored
	case mode == modeReplace:
		a.Status = durable.AddInFlight
	default:
		a.Status = durable.AddExists
	}
	return a, nil
}

// addAll validates every task before storing any, then adds them in order
// on q, which must be a transaction (or one task alone).
func (s *Store) addAll(ctx context.Context, q rowQuerier, mode addMode, tasks []NewTask) ([]Added, error) {
	args := make([][]any, len(tasks))
	for i, t := range tasks {
		a, err := s.addArgs(t)
		if err != nil {
			return nil, err
		}
		args[i] = a
	}
	out := make([]Added, len(tasks))
	for i := range tasks {
		a, err := s.addOne(ctx, q, mode, args[i])
		if err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// add stores each task whose key is new, all in one transaction: an
// existing key, in any state (a retained finished task included), is left
// alone (durable.AddExists). Every task is validated before any is stored.
func (s *Store) add(ctx context.Context, tasks ...NewTask) ([]Added, error) {
	return s.inTxAdd(ctx, modeAdd, tasks)
}

// replace stores each task, rewriting an existing one unless it is in
// flight (durable.AddInFlight): the rewritten task starts over, with no attempts,
// last error, history or result. One transaction for all.
func (s *Store) replace(ctx context.Context, tasks ...NewTask) ([]Added, error) {
	return s.inTxAdd(ctx, modeReplace, tasks)
}

func (s *Store) inTxAdd(ctx context.Context, mode addMode, tasks []NewTask) ([]Added, error) {
	var out []Added
	err := s.inTx(ctx, pgx.TxOptions{}, func(tx pgx.Tx) error {
		var err error
		if mode == modeAdd {
			out, err = s.addTx(ctx, tx, tasks)
		} else {
			out, err = s.addAll(ctx, tx, mode, tasks)
		}
		return err
	})
	return out, err
}

// addTx validates every task before storing any, then adds them on tx
// with addRows.
func (s *Store) addTx(ctx context.Context, tx pgx.Tx, tasks []NewTask) ([]Added, error) {
	args := make([][]any, len(tasks))
	for i, t := range tasks {
		a, err := s.addArgs(t)
		if err != nil {
			return nil, err
		}
		args[i] = a
	}
	return s.addRows(ctx, tx, args)
}

// AddTx is Add inside the caller's transaction: the tasks become visible to
// workers, and their wake-ups are sent, when tx commits; a rollback leaves
// nothing. A relative due time counts from the database clock when AddTx
// runs, not from the transaction's start, so it is never early however long
// the transaction stays open (it may be late by the time the commit takes).
// Run at READ COMMITTED (the default): at REPEATABLE READ or SERIALIZABLE a
// concurrent add of the same key makes the commit fail with a serialization
// error.
func (s *Store) AddTx(ctx context.Context, tx pgx.Tx, tasks ...NewTask) ([]Added, error) {
	if tx == nil {
		panic("pgwheel.AddTx: nil transaction")
	}
	out, err := s.addTx(ctx, tx, tasks)
	return out, schemaMissing(err)
}

// AddSQLTx is AddTx for a database/sql transaction of any PostgreSQL driver
// (pgx's stdlib, lib/pq): the same statements, with scalar arguments only.
func (s *Store) AddSQLTx(ctx context.Context, tx *sql.Tx, tasks ...NewTask) ([]Added, error) {
	if tx == nil {
		panic("pgwheel.AddSQLTx: nil transaction")
	}
	out, err := s.addAll(ctx, sqlTx{tx}, modeAdd, tasks)
	return out, schemaMissing(err)
}
