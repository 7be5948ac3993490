package pgwheel

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/jackc/pgx/v5"
)

// notifyChannel is the channel every namespace's wake-ups go to, with the
// payload "<due Unix ms> <namespace>" (add.go's addNotify, Resume). One
// channel, so a LISTEN costs one per connection however many namespaces.
const notifyChannel = "pgwheel"

// Listener receives the wake-ups of one namespace: an idle worker waits on
// it instead of sleeping until the next due time it knows of, so a task
// another process adds for sooner is not late by the worker's poll
// interval. A wake-up is sent when an Add or Replace stores a task due no
// later than every other scheduled task, and by Reschedule, Requeue and
// Resume; PostgreSQL delivers it when the sending transaction commits
// (never for one rolled back). Wake-ups are hints: a worker must still poll
// now and then, since a Listener that loses its connection misses them.
//
// A Listener holds a connection of its own until Close, opened with the
// pool's connection settings (pgxpool.Config.ConnConfig) but outside the
// pool: it neither counts against MaxConns nor makes the pool's claims and
// the application's statements wait, and the pool's BeforeConnect and
// AfterConnect hooks do not run for it. It is for one goroutine.
type Listener struct {
	conn      *pgx.Conn
	namespace string
}

// Listen opens the Listener's connection and LISTENs on it.
func (s *Store) Listen(ctx context.Context) (*Listener, error) {
	conn, err := pgx.ConnectConfig(ctx, s.pool.Config().ConnConfig)
	if err != nil {
		return nil, fmt.Errorf("pgwheel: listen: %w", err)
	}
	if _, err := conn.Exec(ctx, "LISTEN "+notifyChannel); err != nil {
		closeConn(conn)
		return nil, fmt.Errorf("pgwheel: listen: %w", err)
	}
	return &Listener{conn: conn, namespace: s.namespace}, nil
}

// Wait blocks until a wake-up for the Listener's namespace arrives, and
// returns the due time it announces. After an error (ctx's included) the
// Listener may have lost its connection: Close it and Listen again.
func (l *Listener) Wait(ctx context.Context) (time.Time, error) {
	for {
		n, err := l.conn.WaitForNotification(ctx)
		if err != nil {
			return time.Time{}, fmt.Errorf("pgwheel: wait: %w", err)
		}
		if n.Channel != notifyChannel {
			continue
		}
		ms, ns, ok := strings.Cut(n.Payload, " ")
		if !ok || ns != l.namespace {
			continue
		}
		v, err := strconv.ParseInt(ms, 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("pgwheel: wait: malformed wake-up %q", n.Payload)
		}
		return time.UnixMilli(v).UTC(), nil
	}
}

// Close closes the Listener's connection, waiting at most closeTimeout for
// the server to hear it: a server that is gone cannot.
func (l *Listener) Close() { closeConn(l.conn) }

func closeConn(c *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
	defer cancel()
	c.Close(ctx) //nolint:errcheck // closing a connection we drop anyway
}

const closeTimeout = 5 * time.Second

// Pauses between failed attempts to listen: the first after a failure,
// doubled at each failure in a row up to the last, so that a worker listens
// again within notifyRetryMax of a restarted server's return (it refuses
// connections until it has replayed its WAL) without hammering one that
// stays down.
const (
	notifyRetryMin = 100 * time.Millisecond
	notifyRetryMax = 2 * time.Second
)

var _ durable.Notifier = (*Store)(nil)

// Notify is durable.Notifier's Notify: a durable.Queue's Run on the Store
// calls it, so that its idle workers are woken by the wake-ups of every
// process (see Listener). It holds a connection of its own (not the pool's) while it
// listens. When the connection is lost (the server restarted, the
// connection cut) it reports the error and listens again on a new one,
// pausing between failed attempts (notifyRetryMin doubling to
// notifyRetryMax), then calls wake(0) for the wake-ups it may have missed.
//
// While it runs (a Run's lifetime), the Run's claims, settles and extends
// go through connections of their own too (runconns.go), not the pool's,
// and the upkeep vacuums the task table when a burst ends (upkeep.go).
func (s *Store) Notify(ctx context.Context, wake func(due int64), report func(error)) {
	pool, closePool, err := s.openRunPool(ctx)
	if err != nil {
		report(err)
	}
	defer closePool()
	upkeepDone := make(chan struct{})
	upkeepCtx, stopUpkeep := context.WithCancel(ctx)
	go func() { defer close(upkeepDone); s.runUpkeep(upkeepCtx, pool, report) }()
	defer func() { stopUpkeep(); <-upkeepDone }()
	pause := notifyRetryMin
	for {
		listened, err := s.listenOnce(ctx, wake)
		if ctx.Err() != nil {
			return
		}
		report(err)
		if listened {
			pause = notifyRetryMin // a new run of failures starts short
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		pause = min(2*pause, notifyRetryMax)
	}
}

// listenOnce listens on one connection until it fails, passing each
// wake-up to wake, and returns the failure and whether it listened.
func (s *Store) listenOnce(ctx context.Context, wake func(due int64)) (listened bool, err error) {
	l, err := s.Listen(ctx)
	if err != nil {
		return false, err
	}
	defer l.Close()
	wake(0) // what was stored while nobody listened
	for {
		due, err := l.Wait(ctx)
		if err != nil {
			return true, err
		}
		wake(due.UnixMilli())
	}
}
