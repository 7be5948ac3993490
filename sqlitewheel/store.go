package sqlitewheel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Options configures Open. The zero value is ready to use.
type Options struct {
	// Namespace names the queue's tasks in the file, so that one file may
	// hold several queues (default "default", at most MaxNamespaceLen
	// bytes).
	Namespace string
	// BusyTimeout is how long SQLite's busy handler waits for another
	// connection's write lock before the Store tries again (default 5s):
	// a write waits for as long as its context allows, at most ten
	// BusyTimeouts, and then fails with durable.ErrUnavailable, never with
	// SQLITE_BUSY (see beginWrite). Writes of one Store never wait on
	// each other (see Store); only another Store or process on the same
	// file makes them wait.
	BusyTimeout time.Duration
}

// Limits of Options.
const (
	MaxNamespaceLen    = 256
	DefaultNamespace   = "default"
	DefaultBusyTimeout = 5 * time.Second
)

// readConns caps the read connections (Get, List, Dead, Stats): under WAL
// they run beside the writer and each other, and a handful covers the
// inspection calls of a dashboard.
const readConns = 4

// Store is the SQLite store of package durable: one namespace of durable
// delayed tasks in one database file, made for one process (others on the
// same host may share the file: see the package doc's Limits). Make a Queue
// on it with durable.New.
//
// Concurrency: a Store holds two connection pools on its file. Every write
// (Add, Claim, Extend, Settle, Cancel, ...) goes through the writer, a pool
// of exactly one connection whose transactions begin IMMEDIATE: the Queue's
// goroutines queue for that connection in the process (database/sql hands
// it over in turn), so they never meet SQLITE_BUSY among themselves, and
// each operation reads the clock only once it holds the write lock. Reads
// (Get, List, Dead, Stats) go through up to readConns read-only connections
// and, under WAL, wait for no writer.
type Store struct {
	w, r      *sql.DB
	namespace string
	busy      time.Duration // Options.BusyTimeout: beginWrite's patience
	wakes     wakes         // AddTx's wake-ups at commit: notify.go
}

var _ durable.Store = (*Store)(nil)

// Open opens the database file at path (creating it if absent) as the store
// of opts.Namespace, in WAL mode with synchronous=FULL (see the package doc).
//
// A brand-new file (no table at all) is migrated to SchemaVersion at once,
// so a program needs nothing installed or run beforehand. Any other file
// must already be at SchemaVersion: an older one is refused with
// ErrSchemaTooOld (call Migrate: a schema change is never made silently to
// a file holding tasks), a newer one with ErrSchemaTooNew. A bad path or
// option is ErrOptions. A file Open creates is readable by its owner only
// (mode 0600, as its -wal and -shm files: see createPrivate). Close releases
// the file.
func Open(ctx context.Context, path string, opts Options) (*Store, error) {
	if opts.Namespace == "" {
		opts.Namespace = DefaultNamespace
	}
	if len(opts.Namespace) > MaxNamespaceLen {
		return nil, fmt.Errorf("%w: namespace of %d bytes (at most %d)", ErrOptions, len(opts.Namespace), MaxNamespaceLen)
	}
	w, err := openWriter(path, opts.BusyTimeout)
	if err != nil {
		return nil, err
	}
	v, err := prepareSchema(ctx, w, true)
	if err == nil && v != SchemaVersion {
		err = schemaError(v)
	}
	if err != nil {
		w.Close()
		return nil, err
	}
	r, err := sql.Open("sqlite", dsn(path, opts.BusyTimeout, "_pragma=query_only(1)"))
	if err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlitewheel: open %s: %w", path, err)
	}
	r.SetMaxOpenConns(readConns)
	r.SetMaxIdleConns(readConns)
	return &Store{w: w, r: r, namespace: opts.Namespace, busy: opts.BusyTimeout}, nil
}

// openWriter creates the file at path if absent, private (createPrivate),
// and opens its single-connection write pool, checking that it opens: a
// path SQLite cannot open fails here, not at the first operation.
func openWriter(path string, busy time.Duration) (*sql.DB, error) {
	if err := checkPath(path); err != nil {
		return nil, err
	}
	if busy < 0 {
		return nil, fmt.Errorf("%w: BusyTimeout %v", ErrOptions, busy)
	}
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	// WAL and synchronous=FULL: a commit is on disk (the WAL fsynced) when
	// it returns, so it survives a kill -9 of the process and a power loss.
	w, err := sql.Open("sqlite", dsn(path, busy,
		"_txlock=immediate", "_journal_mode=WAL", "_synchronous=FULL", "_foreign_keys=1"))
	if err != nil {
		return nil, fmt.Errorf("sqlitewheel: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	if err := w.Ping(); err != nil {
		w.Close()
		return nil, fmt.Errorf("sqlitewheel: open %s: %w", path, classify(err))
	}
	return w, nil
}

// checkPath accepts a plain file name: not empty, not ":memory:" (each
// connection would have a database of its own), without '?' (the driver's
// parameters start there) and not a "file:" URI.
func checkPath(path string) error {
	switch {
	case path == "", path == ":memory:", strings.HasPrefix(path, "file:"), strings.ContainsAny(path, "?\x00"):
		return fmt.Errorf("%w: path %q (want a file name)", ErrOptions, path)
	}
	return nil
}

func dsn(path string, busy time.Duration, params ...string) string {
	if busy == 0 {
		busy = DefaultBusyTimeout
	}
	q := append([]string{"_busy_timeout=" + fmt.Sprint(busy.Milliseconds())}, params...)
	// Plain file names keep their bytes; only the parameters are encoded.
	for i, p := range q {
		k, v, _ := strings.Cut(p, "=")
		q[i] = k + "=" + url.QueryEscape(v)
	}
	return path + "?" + strings.Join(q, "&")
}

// Close closes the store's connections; the last one to close checkpoints
// the WAL into the database file. Operations after Close fail.
func (s *Store) Close() error {
	return errors.Join(s.r.Close(), s.w.Close())
}

// Namespace returns the store's namespace.
func (s *Store) Namespace() string { return s.namespace }

// Partitions is 1: one namespace is one range of one index, and one
// process claims it.
func (s *Store) Partitions() int { return 1 }

// clock is one reading of the process's clock, the store's one clock: now
// rounded down to the millisecond ("is it due?" compares with it; it is
// when a task was added) and nowUp rounded up. A deadline a delay > 0 ahead
// is nowUp + delay, never now + delay (up to a millisecond before the
// call's time + delay); a delay of 0 is now, at once (lua/common.lua's
// now_ms).
type clock struct{ now, nowUp int64 }

func readClock() clock {
	t := time.Now()
	ns := t.UnixNano()
	now := ns / 1e6
	if ns%1e6 == 0 {
		return clock{now, now}
	}
	return clock{now, now + 1}
}

func (c clock) after(ms int64) int64 {
	if ms <= 0 {
		return c.now
	}
	return c.nowUp + ms
}

// write runs f in one write transaction (BEGIN IMMEDIATE on the writer),
// committing when f returns nil. The clock is read after the write lock is
// taken, so no other write of the file comes between the reading and the
// commit: "now" is the same for every row f touches.
func (s *Store) write(ctx context.Context, f func(tx *sql.Tx, c clock) error) error {
	tx, err := beginWrite(ctx, s.w, s.busy)
	if err != nil {
		return classify(err)
	}
	if err := f(tx, readClock()); err != nil {
		tx.Rollback() //nolint:errcheck // the error that matters is f's
		return classify(err)
	}
	return classify(tx.Commit())
}

// read runs f in one read transaction: every statement of f reads the same
// snapshot.
func (s *Store) read(ctx context.Context, f func(tx *sql.Tx) error) error {
	tx, err := s.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return classify(err)
	}
	defer tx.Rollback() //nolint:errcheck // read only: nothing to keep
	return classify(f(tx))
}

// classify wraps durable.ErrUnrecoverable around the errors that retrying
// will not heal: a closed store, a file that is not a database or is
// corrupt, one the process may not write; and durable.ErrUnavailable around
// those it may heal (unavailable).
func classify(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, sql.ErrConnDone) || err.Error() == "sql: database is closed" {
		return fmt.Errorf("%w: %w", durable.ErrUnrecoverable, err)
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB, sqlite3.SQLITE_READONLY,
			sqlite3.SQLITE_PERM, sqlite3.SQLITE_CANTOPEN, sqlite3.SQLITE_AUTH:
			return fmt.Errorf("%w: %w", durable.ErrUnrecoverable, err)
		}
	}
	return unavailable(err)
}
