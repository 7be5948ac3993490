package durable

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// shardedStore is an in-memory Store of several partitions, by the local
// clock, holding what a Run of tasks that succeed needs (Add, Claim, Extend,
// Settle), and counting claims. It is a Partitioner; wrap it in
// hiddenPartitions to hide that.
type shardedStore struct {
	Store
	mu     sync.Mutex
	due    []map[string]int64 // per partition: key -> due, Unix ms
	leased []map[string]int64 // per partition: key -> lease end
	token  int
	claims atomic.Int64
	empty  atomic.Int64 // claims that leased nothing
}

func newShardedStore(parts int) *shardedStore {
	s := &shardedStore{}
	for range parts {
		s.due = append(s.due, map[string]int64{})
		s.leased = append(s.leased, map[string]int64{})
	}
	return s
}

// hiddenPartitions is a Store that is not a Partitioner.
type hiddenPartitions struct{ Store }

func (s *shardedStore) Partitions() int { return len(s.due) }

func (s *shardedStore) Partition(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(len(s.due)))
}

func (s *shardedStore) Add(_ context.Context, reqs []*AddRequest) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	now, earliest := time.Now().UnixMilli(), int64(-1)
	for _, r := range reqs {
		p := s.Partition(r.Key)
		_, scheduled := s.due[p][r.Key]
		if _, inFlight := s.leased[p][r.Key]; scheduled || inFlight {
			r.Status = AddExists
			continue
		}
		at := r.At
		if r.Relative {
			at += now
		}
		s.due[p][r.Key], r.Status = at, AddStored
		if earliest < 0 || at < earliest {
			earliest = at
		}
	}
	return earliest
}

func (s *shardedStore) Claim(_ context.Context, partition, limit int, lease time.Duration, _ Limits) (Claimed, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.claims.Add(1)
	now := time.Now().UnixMilli()
	c := Claimed{Now: now, Next: -1}
	for k, at := range s.due[partition] {
		if at <= now && len(c.Tasks) < limit {
			s.token++
			c.Tasks = append(c.Tasks, ClaimedTask{Key: k, Attempt: 1, Due: at, OriginalDue: at, Token: strconv.Itoa(s.token)})
			delete(s.due[partition], k)
			s.leased[partition][k] = now + lease.Milliseconds()
		}
	}
	if len(c.Tasks) == 0 {
		s.empty.Add(1)
	}
	for _, m := range []map[string]int64{s.due[partition], s.leased[partition]} {
		for _, at := range m {
			if c.Next < 0 || at < c.Next {
				c.Next = at
			}
		}
	}
	return c, nil
}

func (s *shardedStore) Extend(_ context.Context, _ int, _ time.Duration, ls []Lease) ([]ExtendCode, error) {
	codes := make([]ExtendCode, len(ls))
	for i := range codes {
		codes[i] = ExtendOK
	}
	return codes, nil
}

func (s *shardedStore) Settle(_ context.Context, partition int, _ Limits, os []Outcome) (Settled, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := Settled{Next: -1}
	for _, o := range os {
		if o.Kind != OutcomeDone {
			panic(fmt.Sprintf("shardedStore: settle %s", o.Kind)) // its tasks succeed, or are released at the end
		}
		delete(s.leased[partition], o.Key)
		out.Codes = append(out.Codes, SettleDone)
	}
	return out, nil
}

// runCounting runs a Queue on st until want tasks ran, and returns the
// claims it made.
func runCounting(t *testing.T, st Store, counts *shardedStore, opts Options, want int, during func(q *Queue)) int64 {
	t.Helper()
	q := stubQueueOn(t, st, opts)
	var ran atomic.Int64
	all := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- q.Run(ctx, func(context.Context, Task) error {
			if ran.Add(1) == int64(want) {
				close(all)
			}
			return nil
		})
	}()
	if during != nil {
		during(q)
	}
	await(t, all, fmt.Sprintf("%d tasks to run", want))
	cancel()
	require.NoError(t, await(t, done, "Run to return"))
	return counts.claims.Load()
}

// TestClaimsOnlyDuePartitions: a Run claims a partition when a task there
// falls due, not every partition at every wake-up: on 16 partitions, 200
// tasks due over a second cost at most 2 claims each beyond the first
// sweep, whether this Queue added them (the Partitioner tells it where) or
// another process did before Run began (the first sweep's Claimed.Next tell
// it). Claiming every partition at every wake-up made about 16 per task.
func TestClaimsOnlyDuePartitions(t *testing.T) {
	const parts, tasks = 16, 200
	opts := Options{PollInterval: time.Hour, Concurrency: 8}
	keys := func() []Item {
		items := make([]Item, tasks)
		start := time.Now().Add(100 * time.Millisecond)
		for i := range items {
			items[i] = Item{Key: fmt.Sprint("task-", i), At: start.Add(time.Duration(rand.N(1000)) * time.Millisecond)}
		}
		return items
	}

	t.Run("added through the Queue", func(t *testing.T) {
		st := newShardedStore(parts)
		claims := runCounting(t, st, st, opts, tasks, func(q *Queue) {
			for _, it := range keys() {
				_, err := q.Add(context.Background(), it.Key, nil, it.At)
				require.NoError(t, err)
			}
		})
		t.Logf("%d claims (%d empty) for %d tasks on %d partitions", claims, st.empty.Load(), tasks, parts)
		require.LessOrEqual(t, claims, int64(parts+2*tasks))
	})
	t.Run("added by another process", func(t *testing.T) {
		st := newShardedStore(parts)
		var reqs []*AddRequest
		for _, it := range keys() {
			reqs = append(reqs, &AddRequest{Key: it.Key, At: it.At.UnixMilli()})
		}
		st.Add(context.Background(), reqs)
		claims := runCounting(t, hiddenPartitions{st}, st, opts, tasks, nil)
		t.Logf("%d claims (%d empty) for %d tasks on %d partitions", claims, st.empty.Load(), tasks, parts)
		require.LessOrEqual(t, claims, int64(parts+2*tasks))
	})
}

// TestOtherProcessesAddsSeenWithinPollInterval: a task another process adds
// (no wake-up reaches this Queue) to a partition a Run knows as empty is
// claimed at the next sweep of every partition, a PollInterval later.
func TestOtherProcessesAddsSeenWithinPollInterval(t *testing.T) {
	st := newShardedStore(16)
	claims := runCounting(t, hiddenPartitions{st}, st, Options{PollInterval: 50 * time.Millisecond}, 1, func(*Queue) {
		for st.claims.Load() < 16 {
			time.Sleep(time.Millisecond) // the first sweep: every partition is empty
		}
		st.Add(context.Background(), []*AddRequest{{Key: "elsewhere", Relative: true}})
	})
	require.GreaterOrEqual(t, claims, int64(17))
}
