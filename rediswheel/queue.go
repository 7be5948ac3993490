package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Queue is a handle on one namespace's delayed tasks in Redis. It is safe for
// concurrent use; any number of Queues in any number of processes may share a
// namespace, and any number of them may Run workers on it.
type Queue struct {
	client redis.UniversalClient
	opts   Options
	keys   [][]string // keys[shard]: see shardKeys

	// mu guards sleepers, the wake-ups of this Queue's Runs.
	mu       sync.Mutex
	sleepers map[*sleeper]struct{}
}

// New returns a Queue on namespace opts.Namespace through client, which may be
// a *redis.Client, a *redis.ClusterClient or any other UniversalClient. It
// checks opts and makes no call to Redis. The errors it returns wrap
// ErrNamespace or ErrOptions.
func New(client redis.UniversalClient, opts Options) (*Queue, error) {
	if client == nil {
		return nil, fmt.Errorf("%w: nil client", ErrOptions)
	}
	opts, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	q := &Queue{client: client, opts: opts, sleepers: map[*sleeper]struct{}{}}
	for i := range opts.Shards {
		q.keys = append(q.keys, shardKeys(opts.Namespace, i))
	}
	return q, nil
}

// Add schedules a task under key to be delivered once Redis's clock reaches
// at, rounded up to the millisecond; a past at is due at once. It is
// idempotent by key: if key is already scheduled, waiting for a retry, in
// flight or dead, Add changes nothing and returns false. A successful Add is
// acknowledged by Redis, so it is as durable as the server's persistence.
func (q *Queue) Add(ctx context.Context, key string, payload []byte, at time.Time) (added bool, err error) {
	status, err := q.add(ctx, key, payload, "nx", unixMilliCeil(at), "abs")
	return status == 1, err
}

// AddAfter is Add with a due time of delay after Redis's clock at the moment
// the task is stored, so the caller's clock does not matter.
func (q *Queue) AddAfter(ctx context.Context, key string, payload []byte, delay time.Duration) (added bool, err error) {
	status, err := q.add(ctx, key, payload, "nx", durationMilliCeil(delay), "rel")
	return status == 1, err
}

// Replace stores the task under key with a new payload and due time, whether
// or not it existed; a scheduled, retrying or dead task starts over with no
// attempts. A task in flight is left alone and Replace returns an error
// wrapping ErrInFlight.
func (q *Queue) Replace(ctx context.Context, key string, payload []byte, at time.Time) error {
	status, err := q.add(ctx, key, payload, "replace", unixMilliCeil(at), "abs")
	if err == nil && status == -1 {
		err = fmt.Errorf("%w: %q", ErrInFlight, key)
	}
	return err
}

func (q *Queue) add(ctx context.Context, key string, payload []byte, mode string, at int64, base string) (int64, error) {
	if err := checkKey(key); err != nil {
		return 0, err
	}
	res, err := addScript.Run(ctx, q.client, q.keys[q.shard(key)], mode, base, key, at, payload).Int64Slice()
	if err == nil && len(res) != 2 {
		err = fmt.Errorf("unexpected reply %v", res)
	}
	if err != nil {
		return 0, fmt.Errorf("rediswheel: add %q: %w", key, err)
	}
	if res[0] >= 0 {
		q.wake(res[0])
	}
	return res[1], nil
}

// An Item is one task for AddBatch.
type Item struct {
	Key     string
	Payload []byte
	At      time.Time
}

// maxAddBatch caps the tasks of one add script call: each costs a few
// microseconds of Redis time, so a call stays well under a millisecond.
const maxAddBatch = 256

// AddBatch is Add for many tasks at once: added[i] reports whether items[i]
// was stored, exactly as Add would. Within one call, a key that appears
// twice is stored once, from its first item. The items of one shard are
// stored by one script call (up to 256 of them), and the calls for all
// shards go out in one pipeline, so a batch costs far fewer round trips and
// far less Redis time per task than as many Adds.
//
// Each script call is atomic, the batch as a whole is not: on error, any
// subset of the items may have been stored. Calling AddBatch again is safe,
// but reports the items stored the first time as not added. It checks every
// key before storing any, and returns an error wrapping ErrKey if one is bad.
func (q *Queue) AddBatch(ctx context.Context, items []Item) (added []bool, err error) {
	for _, it := range items {
		if err := checkKey(it.Key); err != nil {
			return nil, err
		}
	}
	added = make([]bool, len(items))
	byShard := map[int][]int{} // shard -> indexes into items
	for i, it := range items {
		s := q.shard(it.Key)
		byShard[s] = append(byShard[s], i)
	}
	type call struct {
		shard int
		idx   []int
		args  []any
		cmd   *redis.Cmd
	}
	var calls []*call
	for shard, idx := range byShard {
		for len(idx) > 0 {
			n := min(len(idx), maxAddBatch)
			args := make([]any, 0, 2+3*n)
			args = append(args, "nx", "abs")
			for _, i := range idx[:n] {
				args = append(args, items[i].Key, unixMilliCeil(items[i].At), items[i].Payload)
			}
			calls = append(calls, &call{shard: shard, idx: idx[:n], args: args})
			idx = idx[n:]
		}
	}
	exec := func(cs []*call) {
		// Exec's own error is the first command's; each call is checked below.
		_, _ = q.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range cs {
				c.cmd = addScript.EvalSha(ctx, p, q.keys[c.shard], c.args...)
			}
			return nil
		})
	}
	exec(calls)
	// A server that has not seen the script yet (new, restarted, failed
	// over) ran none of those calls: load it and send them again.
	var retry []*call
	for _, c := range calls {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			retry = append(retry, c)
		}
	}
	if len(retry) > 0 {
		if err := addScript.Load(ctx, q.client).Err(); err != nil {
			return added, fmt.Errorf("rediswheel: add batch: load script: %w", err)
		}
		exec(retry)
	}
	first := int64(-1)
	var errs []error
	for _, c := range calls {
		res, err := c.cmd.Int64Slice()
		if err == nil && len(res) != 1+len(c.idx) {
			err = fmt.Errorf("unexpected reply %v", res)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("rediswheel: add batch, shard %d: %w", c.shard, err))
			continue
		}
		for j, i := range c.idx {
			added[i] = res[1+j] == 1
		}
		if res[0] >= 0 && (first < 0 || res[0] < first) {
			first = res[0]
		}
	}
	if first >= 0 {
		q.wake(first)
	}
	return added, errors.Join(errs...)
}

// Cancel removes the task under key and reports whether there was one. It is
// immediate and final: a scheduled or dead task is deleted at once, with no
// tombstone left behind, so a later Add of the key is a new task. A task in
// flight is marked so that whatever its handler returns it is dropped, never
// retried; its handler's context is cancelled at the next lease heartbeat.
// Until that delivery ends, the key still counts as existing for Add.
func (q *Queue) Cancel(ctx context.Context, key string) (bool, error) {
	if err := checkKey(key); err != nil {
		return false, err
	}
	n, err := cancelScript.Run(ctx, q.client, q.keys[q.shard(key)], key).Int64()
	if err != nil {
		return false, fmt.Errorf("rediswheel: cancel %q: %w", key, err)
	}
	return n != 0, nil
}

// shard maps a key to its shard: FNV-1a of the key, mod Shards. The mapping
// is part of the data layout and must never change.
func (q *Queue) shard(key string) int {
	// FNV-1a inline: hash/fnv would allocate for every key.
	const offset32, prime32 = 2166136261, 16777619
	h := uint32(offset32)
	for i := 0; i < len(key); i++ {
		h ^= uint32(key[i])
		h *= prime32
	}
	return int(h % uint32(q.opts.Shards))
}

// A sleeper is one Run's poller as seen by the calls that may have made a task
// due sooner than it knows: this Queue's Adds and its Run's settles.
type sleeper struct {
	// until is the Redis time (ms) the poller means to sleep until, or
	// sweeping while it claims.
	until atomic.Int64
	// hint is the earliest due time (Redis ms) that settles have reported
	// since the current sweep began, math.MaxInt64 if none. The poller reads
	// it after storing until; a settle stores it before reading until. So a
	// retry scheduled while the poller sweeps is either seen by the poller
	// or, once it sleeps, wakes it.
	hint atomic.Int64
	wake chan struct{} // buffered 1
}

// sweeping is sleeper.until while the poller claims: it may have passed any
// shard already, so any Add must wake it.
const sweeping = math.MaxInt64

// wake pokes every Run of this Queue that would otherwise sleep past due
// (Redis ms): a task added by this process is never left waiting for the
// poll interval. Tasks added by other processes are seen within maxSleep.
func (q *Queue) wake(due int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for s := range q.sleepers {
		if due < s.until.Load() {
			s.poke()
		}
	}
}

// hint tells every Run of this Queue that a shard it settled has a task due
// at due (Redis ms), say a retry it has just scheduled. Unlike wake, it does
// not cut a sweep short: the sweep takes the hint into account when it ends.
func (q *Queue) hint(due int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for s := range q.sleepers {
		for h := s.hint.Load(); due < h && !s.hint.CompareAndSwap(h, due); h = s.hint.Load() {
		}
		if u := s.until.Load(); u != sweeping && due < u {
			s.poke()
		}
	}
}

func (s *sleeper) poke() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

func (q *Queue) addSleeper() *sleeper {
	s := &sleeper{wake: make(chan struct{}, 1)}
	s.until.Store(sweeping)
	s.hint.Store(math.MaxInt64)
	q.mu.Lock()
	q.sleepers[s] = struct{}{}
	q.mu.Unlock()
	return s
}

func (q *Queue) removeSleeper(s *sleeper) {
	q.mu.Lock()
	delete(q.sleepers, s)
	q.mu.Unlock()
}

// unixMilliCeil is t in Unix milliseconds rounded up, so that a task is never
// due before t. Times before 1970 become 0 (due at once); times past year
// 285,000 become 2^53 ms, the last millisecond a Redis score holds exactly.
func unixMilliCeil(t time.Time) int64 {
	const maxExact = 1 << 53
	if t.After(time.UnixMilli(maxExact)) {
		return maxExact
	}
	ms := t.UnixMilli()
	if t.After(time.UnixMilli(ms)) {
		ms++
	}
	return max(ms, 0)
}

func durationMilliCeil(d time.Duration) int64 {
	if d <= 0 {
		return 0
	}
	ms := int64(d / time.Millisecond)
	if d%time.Millisecond != 0 {
		ms++
	}
	return ms
}
