package sqlitewheel

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-timingwheel/timingwheel/durable"
)

// The application's transaction. An application whose own tables live in
// the store's file writes them and its tasks in one transaction: it opens
// the file with Open, creates its tables through DB, and passes the
// *sql.Tx it begins on DB to AddTx and CancelTx.
//
//	st, _ := sqlitewheel.Open(ctx, "app.db", sqlitewheel.Options{})
//	db := st.DB()
//	tx, _ := db.BeginTx(ctx, nil)
//	tx.ExecContext(ctx, `INSERT INTO orders ...`)
//	st.AddTx(ctx, tx, sqlitewheel.NewTask{Key: "order:1001", After: 30 * time.Minute})
//	tx.Commit()
//
// DB is the store's writer: one connection, whose transactions begin
// IMMEDIATE. So the application's transaction holds the file's write lock
// from BEGIN to COMMIT, and the Queue's own writes (its claims, settles,
// adds) wait in the process for it, never meeting SQLITE_BUSY; they also
// wait for the connection, so a goroutine that holds a transaction of DB
// must not call the Queue's methods (Add, Cancel, ...) before it ends, or
// it waits on itself. Keep those transactions short: every worker waits
// for them. A second *sql.DB on the file works too, but its writes contend
// for the lock with the Queue's through busy_timeout (SQLITE_BUSY after
// Options.BusyTimeout), and AddTx's wake-ups then come at the Queue's next
// write instead of the commit.
//
// Wake-ups: the Store is a durable.Notifier within its process. A task
// AddTx stores wakes the Queue's idle Runs when the transaction commits
// (SQLite's commit hook on DB's connection), if it is due before the time
// they sleep until, as the Queue's own Add does; a rollback wakes nobody.
// Without a Run listening (none started yet), a Run claims at start.

// DB returns the store's writer pool: the connection the application's
// transactions for AddTx and CancelTx must come from (see above). Closing
// the store closes it; do not close it otherwise, nor change its pool
// settings.
func (s *Store) DB() *sql.DB { return s.w }

// NewTask is one task for AddTx, as pgwheel's: due at At when At is not
// zero (rounded up to the millisecond), otherwise After from the store's
// clock when AddTx runs (rounded up; After <= 0 is at once).
type NewTask struct {
	Key     string
	Payload []byte
	At      time.Time
	After   time.Duration
	Policy  durable.Policy // as Queue.Add's task options store it
}

// Added is the result of adding one task.
type Added struct {
	Status durable.AddStatus // AddStored, or AddExists: the key is taken, in any state
	Due    time.Time         // the stored due time; zero unless Stored
}

// AddTx is Add inside the caller's transaction, tx begun on DB: the tasks
// become visible to workers, and the Queue's idle Runs are woken, when tx
// commits; a rollback leaves nothing. Every task is validated before any
// is stored (errors wrap durable.ErrKey, ErrPayload or ErrTaskOption). An
// existing key, in any state, is left alone (AddExists). A relative due
// time counts from the clock when AddTx runs: tx holds the write lock from
// its BEGIN, so no claim comes between that reading and the commit.
func (s *Store) AddTx(ctx context.Context, tx *sql.Tx, tasks ...NewTask) ([]Added, error) {
	if tx == nil {
		panic("sqlitewheel.AddTx: nil transaction")
	}
	reqs := make([]*durable.AddRequest, len(tasks))
	for i, t := range tasks {
		r, err := addRequest(t)
		if err != nil {
			return nil, fmt.Errorf("sqlitewheel: add %q: %w", t.Key, err)
		}
		reqs[i] = r
	}
	c := readClock()
	out := make([]Added, len(tasks))
	earliest := int64(-1)
	var ins taskInsert
	for i, r := range reqs {
		status, at, err := s.addOne(ctx, tx, c, r, &ins)
		if err != nil {
			return nil, fmt.Errorf("sqlitewheel: add %q: %w", r.Key, classify(err))
		}
		out[i].Status = status
		if status == durable.AddStored {
			out[i].Due = time.UnixMilli(at)
			if earliest < 0 || at < earliest {
				earliest = at
			}
		}
	}
	if earliest >= 0 {
		s.wakes.pend(earliest)
	}
	return out, nil
}

// addRequest checks t as the Queue checks its arguments and returns it as
// a request for addOne.
func addRequest(t NewTask) (*durable.AddRequest, error) {
	if err := checkText(t.Key, durable.MaxKeyLen); err != nil {
		return nil, fmt.Errorf("%w: %w", durable.ErrKey, err)
	}
	if len(t.Payload) > durable.MaxPayloadLen {
		return nil, fmt.Errorf("%w: %d bytes (at most %d)", durable.ErrPayload, len(t.Payload), durable.MaxPayloadLen)
	}
	p := t.Policy
	if p.Timeout < 0 || p.MaxAttempts < 0 || p.BackoffBase < 0 || p.BackoffLimit < 0 || len(p.Type) > durable.MaxTypeLen {
		return nil, fmt.Errorf("%w: task policy %+v", durable.ErrTaskOption, p)
	}
	if p.Type != "" {
		if err := checkText(p.Type, durable.MaxTypeLen); err != nil {
			return nil, fmt.Errorf("%w: task type: %w", durable.ErrTaskOption, err)
		}
	}
	r := &durable.AddRequest{Key: t.Key, Payload: t.Payload, Policy: p}
	if t.At.IsZero() {
		r.Relative, r.At = true, millisCeil(t.After)
	} else {
		r.At = unixMilliCeil(t.At)
	}
	return r, nil
}

// unixMilliCeil is t in Unix ms, rounded up: a due time is never moved
// earlier.
func unixMilliCeil(t time.Time) int64 {
	ms := t.UnixMilli()
	if t.Sub(time.UnixMilli(ms)) > 0 {
		ms++
	}
	return ms
}

// checkText accepts 1..max bytes of UTF-8 without NUL: durable's rule for
// keys and task types.
func checkText(v string, max int) error {
	switch {
	case v == "" || len(v) > max:
		return fmt.Errorf("length %d (want 1..%d)", len(v), max)
	case !utf8.ValidString(v):
		return fmt.Errorf("%q is not UTF-8", v)
	case strings.IndexByte(v, 0) >= 0:
		return fmt.Errorf("%q holds a NUL byte", v)
	}
	return nil
}
