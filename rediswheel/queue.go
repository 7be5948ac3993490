package rediswheel

import (
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

	adds adder // coalesces concurrent Adds: see add.go
	// oneServer: client is a *redis.Client, so every shard is on one server
	// and one add call may span shards (see sendAdds).
	oneServer bool

	// mu guards sleepers, the wake-ups of this Queue's Runs.
	mu       sync.Mutex
	sleepers map[*sleeper]struct{}

	// maxSleep caps an idle poller's sleep: the constant maxSleep, unless a
	// test lengthens it before Run, to tell a wake-up from a poll.
	maxSleep time.Duration
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
	q := &Queue{client: client, opts: opts, sleepers: map[*sleeper]struct{}{}, maxSleep: maxSleep}
	_, q.oneServer = client.(*redis.Client)
	for i := range opts.Shards {
		q.keys = append(q.keys, shardKeys(opts.Namespace, i))
	}
	return q, nil
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
		for h := s.hint.Load(); due < h; h = s.hint.Load() { // lower the hint to due
			if s.hint.CompareAndSwap(h, due) {
				break
			}
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
// Both ends are tested before t.UnixMilli, which wraps around for times
// beyond about 292 million years either side of 1970: a time that far back
// would otherwise come out as "never".
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
