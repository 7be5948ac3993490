package rediswheel

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/redis/go-redis/v9"
)

// Redis's own defaults and limits; the others are durable's (compat.go).
const (
	DefaultShards = 16
	MaxShards     = 1024
	maxNamespace  = 128
)

// ErrNamespace reports an empty or malformed Options.Namespace.
var ErrNamespace = errors.New("rediswheel: bad namespace")

// Options configures a Queue on Redis: Namespace and Shards say where its
// tasks are, the other fields are durable.Options' (see there; they are
// repeated here so that code written before package durable compiles). The
// zero value of each field means its default.
//
// Every process that shares a Namespace must use the same Shards: a task's
// shard is hash(key) mod Shards, so a process with another count looks for
// keys in the wrong shards. The other fields may differ between processes;
// the worker that finishes a delivery applies its own MaxAttempts and Backoff.
type Options struct {
	// Namespace prefixes every key; one namespace is one logical wheel. It
	// must be non-empty, at most 128 bytes, and free of '{', '}' and spaces.
	Namespace string
	// Shards is the number of shards, each hash-tagged to one cluster slot
	// (default 16, at most 1024). More shards spread a namespace over more
	// cluster masters; each idle Run polls every shard about once a second.
	Shards int
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
	// MaxDead caps each shard's dead set; past it the oldest dead tasks are
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
	// not its payload, about 700 bytes of Redis memory each (measured by
	// TestRetainedMemory). It is forgotten by the first settle or cancel on
	// its shard after its retention ends, so the window may last a little
	// longer on an idle shard, never shorter unless the shard holds more than
	// MaxRetained (the oldest are forgotten early, see Observer's
	// RetainedTrimmed). Cancel of a retained task and Replace of its key end
	// the window at once.
	Retention time.Duration
	// MaxRetained caps each shard's retained tasks; past it the oldest are
	// forgotten early (default DefaultMaxRetained).
	MaxRetained int
	// HistoryLen is how many deliveries each task remembers (Get's
	// TaskInfo.History), newest kept (default DefaultHistoryLen, at most
	// MaxHistoryLen).
	HistoryLen int
	// WorkerID names this process's deliveries in task histories (default
	// "host:pid:xxxx", the host name, pid and 4 random hex digits; at most
	// 256 bytes).
	WorkerID string
	// Observer, if set, receives the Queue's events: see Observer.
	Observer Observer
	// PollInterval caps an idle Run's sleep (default 1s): tasks added by
	// other processes are claimed at most about this late.
	PollInterval time.Duration
	// Flow, if set, limits deliveries per destination: see durable.Flow.
	Flow *durable.Flow
}

// New returns a Queue on namespace opts.Namespace through client, which may be
// a *redis.Client, a *redis.ClusterClient or any other UniversalClient: a
// durable.Queue on the Redis store NewStore(client, opts.Namespace,
// opts.Shards). It checks opts and makes no call to Redis. The errors it
// returns wrap ErrNamespace or ErrOptions.
func New(client redis.UniversalClient, opts Options) (*Queue, error) {
	st, err := NewStore(client, opts.Namespace, opts.Shards)
	if err != nil {
		return nil, err
	}
	return durable.New(st, opts.durable())
}

// durable is o without the Redis fields, with the namespace in log lines.
func (o Options) durable() durable.Options {
	return durable.Options{
		Lease: o.Lease, MaxAttempts: o.MaxAttempts, Backoff: o.Backoff, Concurrency: o.Concurrency,
		MaxDead: o.MaxDead, OnError: o.OnError, HandlerTimeout: o.HandlerTimeout,
		ShutdownGrace: o.ShutdownGrace, Retention: o.Retention, MaxRetained: o.MaxRetained,
		HistoryLen: o.HistoryLen, WorkerID: o.WorkerID, Observer: o.Observer,
		PollInterval: o.PollInterval, Flow: o.Flow, LogAttrs: []slog.Attr{slog.String("namespace", o.Namespace)},
	}
}

// checkNamespace checks a namespace: the prefix of every key, inside a hash
// tag, so it must not hold braces, and spaces would make keys awkward to
// type in redis-cli.
func checkNamespace(ns string) error {
	if ns == "" || len(ns) > maxNamespace || strings.ContainsAny(ns, "{} \t\r\n") {
		return fmt.Errorf("%w: %q (non-empty, at most %d bytes, no braces or spaces)", ErrNamespace, ns, maxNamespace)
	}
	return nil
}
