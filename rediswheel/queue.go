package rediswheel

import (
	"context"
	"fmt"
	"hash/fnv"
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
	res, err := addScript.Run(ctx, q.client, q.keys[q.shard(key)], key, mode, at, base, payload).Int64Slice()
	if err != nil {
		return 0, fmt.Errorf("rediswheel: add %q: %w", key, err)
	}
	if len(res) != 2 {
		return 0, fmt.Errorf("rediswheel: add %q: unexpected reply %v", key, res)
	}
	if res[0] == 1 {
		q.wake(res[1])
	}
	return res[0], nil
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
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(q.opts.Shards))
}

// A sleeper is one Run's poller as seen by Add: until is the Redis time (ms)
// it means to sleep until, math.MaxInt64 while it is sweeping the shards.
type sleeper struct {
	until atomic.Int64
	wake  chan struct{} // buffered 1
}

// wake pokes every Run of this Queue that would otherwise sleep past due
// (Redis ms): a task added by this process is never left waiting for the
// poll interval. Tasks added by other processes are seen within maxSleep.
func (q *Queue) wake(due int64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for s := range q.sleepers {
		if due < s.until.Load() {
			select {
			case s.wake <- struct{}{}:
			default:
			}
		}
	}
}

func (q *Queue) addSleeper() *sleeper {
	s := &sleeper{wake: make(chan struct{}, 1)}
	s.until.Store(math.MaxInt64)
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
