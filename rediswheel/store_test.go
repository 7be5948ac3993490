package rediswheel

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/redis/go-redis/v9"
)

// A testQueue is a Queue with its Redis store in reach, for the tests that
// look into Redis or drive the scripts one at a time. The script calls below
// (claim, settle, extend, periodicOp) take and return the shapes the worker
// used before the Queue moved to package durable, so that those tests read
// as they did.
type testQueue struct {
	*Queue
	st     *Store
	client redis.UniversalClient
	keys   [][]string // keys[shard]: see shardKeys
	opts   Options    // with the defaults filled in
}

// newTQ is New, keeping the store.
func newTQ(c redis.UniversalClient, opts Options) (*testQueue, error) {
	st, err := NewStore(c, opts.Namespace, opts.Shards)
	if err != nil {
		return nil, err
	}
	q, err := durable.New(st, opts.durable())
	if err != nil {
		return nil, err
	}
	d := q.Options()
	full := Options{
		Namespace: opts.Namespace, Shards: st.Partitions(), Lease: d.Lease, MaxAttempts: d.MaxAttempts,
		Backoff: d.Backoff, Concurrency: d.Concurrency, MaxDead: d.MaxDead, OnError: d.OnError,
		HandlerTimeout: d.HandlerTimeout, ShutdownGrace: d.ShutdownGrace, Retention: d.Retention,
		MaxRetained: d.MaxRetained, HistoryLen: d.HistoryLen, WorkerID: d.WorkerID,
		Observer: d.Observer, PollInterval: d.PollInterval,
	}
	return &testQueue{Queue: q, st: st, client: c, keys: st.keys, opts: full}, nil
}

func (q *testQueue) shard(key string) int   { return q.st.shard(key) }
func (q *testQueue) registryKey() string    { return q.st.registryKey() }
func (q *testQueue) limits() durable.Limits { return q.Limits() }

// delivery, claimed, outcome and settled are the worker's shapes of a
// claimed task, a claim, a finished delivery and a settle.
type delivery struct {
	shard         int
	token         string
	task          Task
	policy        durable.Policy
	postponements int
}

type claimed struct {
	now, next int64
	trimmed   int
	paused    bool
	tasks     []*delivery
}

type outcome struct {
	d     *delivery
	kind  durable.OutcomeKind
	delay int64
	err   string
}

type settled struct {
	codes                []settleCode
	trimmed, trimmedKept int
}

// The tests compare codes with the numbers the scripts return.
type (
	settleCode  = int64
	extendCode  = int64
	outcomeKind = durable.OutcomeKind
)

const (
	outcomeDone    = durable.OutcomeDone
	outcomeRetry   = durable.OutcomeRetry
	outcomeDead    = durable.OutcomeDead
	outcomeRelease = durable.OutcomeRelease
	outcomeLater   = durable.OutcomeLater

	settleRejected  = int64(durable.SettleRejected)
	settleDone      = int64(durable.SettleDone)
	settleRetry     = int64(durable.SettleRetry)
	settleDead      = int64(durable.SettleDead)
	settleCancelled = int64(durable.SettleCancelled)
	settleReleased  = int64(durable.SettleReleased)
	settlePostponed = int64(durable.SettlePostponed)

	extendLost      = int64(durable.ExtendLost)
	extendOK        = int64(durable.ExtendOK)
	extendCancelled = int64(durable.ExtendCancelled)

	// The worker's own settings, as durable passes them in Limits.
	maxUnconfirmed = 3
	reapBatch      = 64
	maxBatch       = 128
	maxSleep       = durable.DefaultPollInterval
)

// claim is one claim script call, as the worker makes it.
func (q *testQueue) claim(ctx context.Context, shard, limit int, lease time.Duration) (claimed, error) {
	c, err := q.st.Claim(ctx, shard, limit, lease, q.limits())
	if err != nil {
		return claimed{}, err
	}
	out := claimed{now: c.Now, next: c.Next, trimmed: c.DeadTrimmed, paused: c.Paused}
	for _, t := range c.Tasks {
		out.tasks = append(out.tasks, &delivery{shard: shard, token: t.Token, policy: t.Policy, postponements: t.Postponements, task: Task{
			Key: t.Key, Payload: t.Payload, Attempt: t.Attempt, Due: time.UnixMilli(t.Due),
			OriginalDue: time.UnixMilli(t.OriginalDue), Type: t.Policy.Type,
		}})
	}
	return out, nil
}

// settle is one settle script call, as the worker makes it.
func (q *testQueue) settle(ctx context.Context, shard int, os []outcome) (settled, error) {
	out := make([]durable.Outcome, len(os))
	for i, o := range os {
		out[i] = durable.Outcome{Key: o.d.task.Key, Token: o.d.token, Kind: o.kind, Delay: o.delay, Err: o.err}
	}
	s, err := q.st.Settle(ctx, shard, q.limits(), out)
	if err != nil {
		return settled{}, err
	}
	codes := make([]int64, len(s.Codes))
	for i, c := range s.Codes {
		codes[i] = int64(c)
	}
	return settled{codes: codes, trimmed: s.DeadTrimmed, trimmedKept: s.RetainedTrimmed}, nil
}

// extend is one extend script call, as the heartbeat makes it.
func (q *testQueue) extend(ctx context.Context, shard int, ds []*delivery, lease time.Duration) ([]extendCode, error) {
	ls := make([]durable.Lease, len(ds))
	for i, d := range ds {
		ls[i] = durable.Lease{Key: d.task.Key, Token: d.token}
	}
	cs, err := q.st.Extend(ctx, shard, lease, ls)
	codes := make([]int64, len(cs))
	for i, c := range cs {
		codes[i] = int64(c)
	}
	return codes, err
}

// periodicState is one reply of lua/periodic.lua.
type periodicState struct {
	status, pointer, now int64
}

// periodicOp is one call of lua/periodic.lua with op, name and args as
// given, so that a test may send what Store.Periodic never would.
func (q *testQueue) periodicOp(ctx context.Context, op, name string, args ...any) (periodicState, error) {
	v, err := periodicScript.Run(ctx, q.client, []string{q.registryKey()}, append([]any{op, name}, args...)...).Int64Slice()
	if err == nil && len(v) != 3 {
		err = fmt.Errorf("unexpected reply %v", v)
	}
	if err != nil {
		return periodicState{}, err
	}
	return periodicState{status: v[0], pointer: v[1], now: v[2]}, nil
}

// unixMilliCeil is t in Unix ms rounded up, as durable stores a due time.
func unixMilliCeil(t time.Time) int64 {
	const maxExact = 1 << 53
	if t.After(time.UnixMilli(maxExact)) {
		return maxExact
	}
	if !t.After(time.UnixMilli(0)) {
		return 0
	}
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return ms
}

// maxPolicyDuration is durable's longest policy duration, in whole ms.
const maxPolicyDuration = time.Duration(maxPolicyMs) * time.Millisecond

// periodicPrefix starts every occurrence's task key (durable's periodic.go).
const periodicPrefix = "periodic:"

// occurrenceKey is the task key of name's time at ms.
func occurrenceKey(name string, ms int64) string {
	return periodicPrefix + name + "@" + strconv.FormatInt(ms, 10)
}

// catchUpGrace is how late durable's Periodic still runs a missed time on
// its own (durable's periodic.go).
const catchUpGrace = 2 * time.Second
