package memstore

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Options configure a Store; the zero value is one partition on time.Now.
type Options struct {
	// Partitions is the number of partitions, 1 if 0. Keys spread over them
	// by an FNV-1a hash, as a Redis store's over its shards.
	Partitions int
	// Clock is the store's clock, time.Now if nil. Every time the store
	// reads or writes (due times, lease ends, "now") is Unix ms of it.
	Clock func() time.Time
}

// Store is an in-memory durable.Store, safe for concurrent use.
type Store struct {
	clock func() time.Time
	parts []*partition

	// token is the last fencing token handed out, by any partition: a
	// token is never handed out twice.
	token atomic.Int64

	regMu    sync.Mutex
	registry map[string]int64 // periodic schedule name -> pointer, Unix ms
}

// A partition holds its tasks under mu: every operation on it holds mu from
// its clock reading to its reply, which makes it atomic. Lock order: only
// List holds several partitions' locks at once, taken in partition order;
// regMu is never held with one.
type partition struct {
	mu     sync.Mutex
	tasks  map[string]*task
	paused bool
}

// New returns an empty Store. A negative Partitions panics: it is a
// programming mistake, as a nil Clock is not.
func New(opts Options) *Store {
	n := opts.Partitions
	if n < 0 {
		panic(fmt.Sprintf("memstore.New: %d partitions", n))
	}
	if n == 0 {
		n = 1
	}
	clock := opts.Clock
	if clock == nil {
		clock = time.Now
	}
	s := &Store{clock: clock, parts: make([]*partition, n), registry: map[string]int64{}}
	for i := range s.parts {
		s.parts[i] = &partition{tasks: map[string]*task{}}
	}
	return s
}

var _ durable.Store = (*Store)(nil)

// Partitions is durable.Store's Partitions.
func (s *Store) Partitions() int { return len(s.parts) }

// partitionOf is the partition that holds key, fixed by the key alone.
func (s *Store) partitionOf(key string) int {
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(len(s.parts)))
}

// lock locks partition p, or returns an error for a partition that does not
// exist or a ctx that has ended (a store over a network fails the same).
func (s *Store) lock(ctx context.Context, op string, p int) (*partition, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("memstore: %s: %w", op, err)
	}
	if p < 0 || p >= len(s.parts) {
		return nil, fmt.Errorf("memstore: %s: partition %d of %d", op, p, len(s.parts))
	}
	part := s.parts[p]
	part.mu.Lock()
	return part, nil
}
