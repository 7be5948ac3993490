package durable

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"time"
)

// Defaults for the zero fields of Options.
const (
	DefaultPollInterval = time.Second
	DefaultLease        = 30 * time.Second
	DefaultMaxAttempts  = 25
	DefaultConcurrency  = 64
	DefaultMaxDead      = 10000
	DefaultMaxRetained  = 10000
	DefaultHistoryLen   = 10
)

// Limits checked by New and by the task operations.
const (
	MinLease = 100 * time.Millisecond
	// MaxKeyLen caps a task's key, in bytes (see checkKey).
	MaxKeyLen = 1024
	// MaxPayloadLen caps a task's payload: 512 MiB, the largest value a
	// Redis argument may be (proto-max-bulk-len's default), the narrowest
	// of the stores (PostgreSQL's bytea holds 1 GB, SQLite's blob 10^9
	// bytes).
	MaxPayloadLen = 512 << 20
	// MaxHistoryLen caps Options.HistoryLen: settle rewrites a task's whole
	// history (JSON) at every delivery, so its cost grows with the length.
	MaxHistoryLen = 1000
	maxWorkerID   = 256
)

// Options configures a Queue. The zero value of each field means its default.
//
// The fields may differ between processes that share a store; the worker
// that finishes a delivery applies its own MaxAttempts and Backoff.
type Options struct {
	// Lease is how long a claimed task stays owned by its worker before it is
	// delivered again; Run extends it every Lease/3 while the handler runs
	// (default 30s, at least 100ms).
	Lease time.Duration
	// MaxAttempts is the number of deliveries after which a failing task goes
	// to the dead set (default 25).
	MaxAttempts int
	// Backoff gives the delay before the next delivery after failed attempt
	// number attempt (1-based). Default DefaultBackoff.
	Backoff func(attempt int) time.Duration
	// Concurrency is the number of handlers one Run runs at once (default 64).
	// Run claims no more tasks than it has free handlers.
	Concurrency int
	// MaxDead caps the dead tasks of each partition of the store (a Redis
	// shard; a SQL store has one); past it the oldest dead tasks are
	// dropped, a few per failure (default 10000).
	MaxDead int
	// OnError, if set, receives the errors Run cannot return: failed claims,
	// heartbeats and acks. Run retries them itself; a task whose ack was lost
	// is delivered again after its lease. It must not block. When it is nil,
	// they go to slog.Default at warning level, with an "op" attribute (claim,
	// extend or settle) and an "err" one.
	OnError func(error)

	// HandlerTimeout bounds each delivery's handler when the task has no
	// TaskTimeout of its own: its context is cancelled after it, and a
	// handler still running then counts as a failed attempt (default 0: no
	// bound). That delivery is settled at once, without waiting for the
	// handler, which keeps its place among Concurrency until it returns.
	HandlerTimeout time.Duration
	// ShutdownGrace is how long a stopping Run lets running handlers finish
	// before it cancels their contexts and releases their tasks (default 0:
	// cancel at once).
	ShutdownGrace time.Duration
	// Retention keeps finished tasks (done or cancelled) readable through Get
	// and List for this long after they finish, and makes Add of their key a
	// no-op meanwhile: a uniqueness window (default 0: forgotten at once).
	// Dead tasks are not concerned: they stay in the dead set (MaxDead). A
	// retained task keeps its attempts, last error, record and history but
	// not its payload (what that costs is each store's: rediswheel's doc
	// gives Redis's). It is forgotten by the first settle or cancel on its
	// partition after its retention ends, so the window may last a little
	// longer on an idle partition, never shorter unless the partition holds
	// more than MaxRetained (the oldest are forgotten early, see Observer's
	// RetainedTrimmed). Cancel of a retained task and Replace of its key end
	// the window at once.
	Retention time.Duration
	// MaxRetained caps each partition's retained tasks; past it the oldest are
	// forgotten early (default DefaultMaxRetained).
	MaxRetained int
	// HistoryLen is how many deliveries each task remembers (Get's
	// TaskInfo.History), newest kept (default DefaultHistoryLen, at most
	// MaxHistoryLen).
	HistoryLen int
	// WorkerID names this process's deliveries in task histories (default
	// "host:pid:xxxx", the host name, pid and 4 random hex digits; at most
	// 256 bytes of UTF-8 without NUL, as histories keep it on every store).
	WorkerID string
	// Observer, if set, receives the Queue's events: see Observer.
	Observer Observer
	// Flow, if set, limits deliveries per destination (flow key) in each
	// Run, with a circuit breaker per key: see Flow.
	Flow *Flow
	// PollInterval caps an idle Run's sleep between claims (default 1s): a
	// task added by another process, which cannot wake this one unless the
	// store is a Notifier, is claimed at most about this late. This
	// process's own Adds wake it at once.
	PollInterval time.Duration
	// LogAttrs are added to the lines Run and Periodic log when OnError is
	// nil (rediswheel adds the namespace), after op and err.
	LogAttrs []slog.Attr
}

// DefaultBackoff is exponential with full jitter: a uniformly random delay in
// [0, min(1h, 1s * 2^(attempt-1))], so that tasks failing together do not
// retry together. With 25 attempts a task that always fails dies after about 6.5 hours on average.
func DefaultBackoff(attempt int) time.Duration {
	return fullJitter(time.Second, time.Hour, attempt)
}

// ExponentialBackoff returns a Backoff for Options of DefaultBackoff's shape
// with other bounds: a uniformly random delay in [0, min(limit,
// base*2^(attempt-1))]. DefaultBackoff is ExponentialBackoff(time.Second,
// time.Hour). It panics unless 0 < base <= limit.
func ExponentialBackoff(base, limit time.Duration) func(attempt int) time.Duration {
	if base <= 0 || limit < base {
		panic(fmt.Sprintf("durable: ExponentialBackoff(%v, %v): want 0 < base <= limit", base, limit))
	}
	return func(attempt int) time.Duration { return fullJitter(base, limit, attempt) }
}

// withDefaults validates o and fills in its zero fields.
func (o Options) withDefaults() (Options, error) {
	check := []struct {
		bad  bool
		what string
	}{
		{o.Lease < 0 || (o.Lease > 0 && o.Lease < MinLease), fmt.Sprintf("Lease %v (want 0 or at least %v)", o.Lease, MinLease)},
		{o.MaxAttempts < 0, fmt.Sprintf("MaxAttempts %d", o.MaxAttempts)},
		{o.Concurrency < 0, fmt.Sprintf("Concurrency %d", o.Concurrency)},
		{o.MaxDead < 0, fmt.Sprintf("MaxDead %d", o.MaxDead)},
		{o.Retention < 0, fmt.Sprintf("Retention %v", o.Retention)},
		{o.MaxRetained < 0, fmt.Sprintf("MaxRetained %d", o.MaxRetained)},
		{o.HistoryLen < 0 || o.HistoryLen > MaxHistoryLen, fmt.Sprintf("HistoryLen %d (want 0..%d)", o.HistoryLen, MaxHistoryLen)},
		{o.HandlerTimeout < 0, fmt.Sprintf("HandlerTimeout %v", o.HandlerTimeout)},
		{o.ShutdownGrace < 0, fmt.Sprintf("ShutdownGrace %v", o.ShutdownGrace)},
		{len(o.WorkerID) > maxWorkerID, fmt.Sprintf("WorkerID of %d bytes (at most %d)", len(o.WorkerID), maxWorkerID)},
		{checkText(o.WorkerID, maxWorkerID) != nil && o.WorkerID != "", fmt.Sprintf("WorkerID %q (want UTF-8 without NUL)", o.WorkerID)},
		{o.PollInterval < 0, fmt.Sprintf("PollInterval %v", o.PollInterval)},
	}
	for _, c := range check {
		if c.bad {
			return o, fmt.Errorf("%w: %s", ErrOptions, c.what)
		}
	}
	if o.PollInterval == 0 {
		o.PollInterval = DefaultPollInterval
	}
	if o.Lease == 0 {
		o.Lease = DefaultLease
	}
	if o.MaxAttempts == 0 {
		o.MaxAttempts = DefaultMaxAttempts
	}
	if o.Concurrency == 0 {
		o.Concurrency = DefaultConcurrency
	}
	if o.MaxDead == 0 {
		o.MaxDead = DefaultMaxDead
	}
	if o.MaxRetained == 0 {
		o.MaxRetained = DefaultMaxRetained
	}
	if o.HistoryLen == 0 {
		o.HistoryLen = DefaultHistoryLen
	}
	if o.Backoff == nil {
		o.Backoff = DefaultBackoff
	}
	if o.WorkerID == "" {
		o.WorkerID = defaultWorkerID()
	}
	return o, nil
}

// defaultWorkerID is "host:pid:xxxx": the host and pid find the process, the
// random suffix tells apart Queues of one process and a pid reused after a
// restart.
func defaultWorkerID() string {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown"
	}
	return fmt.Sprintf("%s:%d:%04x", host, os.Getpid(), rand.N(1<<16))
}
