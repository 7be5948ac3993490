package pgwheel

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-timingwheel/timingwheel/durable"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Limits on names, as rediswheel's.
const (
	MaxKeyLen       = 1024
	MaxNamespaceLen = 256
)

// Querier is what a one-statement operation needs: a *pgxpool.Pool, a
// *pgx.Conn or a pgx.Tx.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Store is one namespace of durable delayed tasks in a PostgreSQL database
// migrated by Migrate. Its methods are the atomic operations a worker loop
// drives, each one transaction (AddTx joins the caller's), by the database
// clock. It is safe for concurrent use by any number of goroutines and
// processes. New touches no table; CheckSchema tells whether the database
// is ready.
type Store struct {
	pool      *pgxpool.Pool
	namespace string
	runs      runPools // the Runs' own connections: runconns.go
	up        upkeep   // the Runs' vacuum: upkeep.go
}

// New returns the Store of namespace on pool. It panics on a nil pool (a
// programming error) and returns ErrNamespace for an empty or too long
// namespace, or one PostgreSQL's text cannot hold, and ErrPoolTooSmall for a
// pool of fewer than MinPoolConns connections (see the package doc's "Pool
// size" for the rule a pool should follow).
func New(pool *pgxpool.Pool, namespace string) (*Store, error) {
	if pool == nil {
		panic("pgwheel.New: nil pool")
	}
	if err := checkText(namespace, MaxNamespaceLen); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNamespace, err)
	}
	if n := pool.Config().MaxConns; n < MinPoolConns {
		return nil, fmt.Errorf("%w: %d connections, want at least %d (a Run's claims, settles and heartbeat, "+
			"and one for everything else); set pool_max_conns in the URL or pgxpool.Config.MaxConns",
			ErrPoolTooSmall, n, MinPoolConns)
	}
	return &Store{pool: pool, namespace: namespace, up: newUpkeep()}, nil
}

// MinPoolConns is the smallest pool New accepts: a durable.Queue's Run's
// claims, settles and extends (one of each at a time) use the pool when
// the Run's own connections are not open (runconns.go), and the Queue's
// Adds and Cancels need one more. pgxpool's default, max(4, number of
// CPUs), passes (the package doc's "Pool size").
const MinPoolConns = 4

var _ durable.Store = (*Store)(nil)

// Partitions is durable.Store's Partitions: a namespace is one partition,
// one range of the index; claimers skip each other's locked rows rather
// than take turns.
func (*Store) Partitions() int { return 1 }

// Namespace returns the namespace given to New.
func (s *Store) Namespace() string { return s.namespace }

// checkText accepts what a text column holds: 1..max bytes of UTF-8
// without NUL.
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

func checkKey(key string) error {
	if err := checkText(key, MaxKeyLen); err != nil {
		return fmt.Errorf("%w: %w", durable.ErrKey, err)
	}
	return nil
}

// storableText makes an error text or a worker id fit a text column: invalid
// UTF-8 becomes U+FFFD and NUL bytes go. Such text is informative only, so
// it is cleaned rather than refused.
func storableText(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", "")
}

// millisCeil is d in whole milliseconds, rounded up (a delay is never
// shortened), 0 for d <= 0.
func millisCeil(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++
	}
	return ms
}

// timeCeil rounds t up to the millisecond, the schema's resolution: an
// absolute due time is never moved earlier.
func timeCeil(t time.Time) time.Time {
	r := t.Truncate(time.Millisecond)
	if r.Before(t) {
		r = r.Add(time.Millisecond)
	}
	return r
}

// fromMillis turns the Unix ms the queries return into a time, -1 (none)
// into the zero time.
func fromMillis(ms int64) time.Time {
	if ms < 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// millisOf is t in Unix ms (every stored time is whole ms), -1 for the zero
// time (none), as durable's replies spell it.
func millisOf(t time.Time) int64 {
	if t.IsZero() {
		return -1
	}
	return t.UnixMilli()
}

// msOf is the SQL of a timestamptz expression as Unix ms (exact: every
// stored time is whole ms), -1 for NULL.
func msOf(expr string) string {
	return "coalesce((extract(epoch FROM " + expr + ") * 1000)::bigint, -1)"
}

// inTx runs f in a transaction of s's pool, committing when f returns nil.
func (s *Store) inTx(ctx context.Context, opts pgx.TxOptions, f func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.pool, opts, f)
}

// inRunTx is inTx on the pool of a Run's own operations (runPool).
func (s *Store) inRunTx(ctx context.Context, opts pgx.TxOptions, f func(pgx.Tx) error) error {
	return pgx.BeginTxFunc(ctx, s.runPool(), opts, f)
}
