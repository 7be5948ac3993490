package rediswheel

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/redis/go-redis/v9"
)

// The data layout: which hash tag each shard's keys carry, so which Redis
// Cluster slot, so which master. Two layouts exist, and a namespace keeps
// the one it was first used with, recorded in its layout key
// ({<ns>.layout}, a string):
//
//	layout  shard i's tag      slots of 16 shards on 3 masters (8 names, 1M tasks)
//	1       {<ns>.<i>}         as CRC16 falls: busiest master 38-62% (issue 30)
//	2       {<ns>.<i>~<s>}     slot in the middle half of the i-th of n equal slot ranges:
//	                           busiest master 6/16 = 37.5% for every name
//
// In layout 2, s is the smallest suffix 0, 1, 2, ... that puts the tag's
// slot (CRC16 mod 16384, as CLUSTER KEYSLOT computes it) in the middle half
// of [i*16384/n, (i+1)*16384/n): the shards follow the slot space in order,
// evenly. A master that owns a contiguous range of slots owns the shards
// whose range lies in it: on masters of equal contiguous ranges (what
// redis-cli --cluster create makes, 3 masters or any other count m), each
// master holds n/m shards, give or take the one or two whose middle half
// straddles its ends (TestSpreadLayoutEven counts them). On a resharded
// cluster a master holds the shards of the slots it owns: as even as the
// resharding left the slots. The tags depend on the namespace and the shard
// count only, never on the cluster's topology, so that every process names
// the same keys whatever it saw at start and a resharding moves tasks with
// their slots, not their names.
//
// A layout is chosen once per namespace, at the Store's first operation
// (resolve): the one recorded, else 1 if any key of layout 1 exists (data
// written before layout 2 existed: its tasks stay where they are, findable),
// else 2; SET NX records it, so concurrent processes agree. A process of a
// version before layout 2 ignores the record and uses layout 1: upgrade
// every process of a namespace that holds no data yet before it is used,
// or an old process's adds land where the new ones do not look. To move a
// namespace of layout 1 to layout 2, drain it, delete its keys (the layout
// key too) and start again.
const (
	layoutTags   = "1"
	layoutSpread = "2"
)

// layoutKey is the namespace's layout record: its own hash tag, no shard's.
func layoutKey(ns string) string { return "{" + ns + ".layout}" }

// tagKeys names the keys of a shard whose hash tag is tag, in the order
// the scripts expect: due, lease, dead, body, ctl, kept.
func tagKeys(tag string) []string {
	return []string{tag + ":due", tag + ":lease", tag + ":dead", tag + ":body", tag + ":ctl", tag + ":kept"}
}

// spreadKeys names the keys of shard i of n of namespace ns in layout 2.
// The tag ends in "~<s>", where layout 1's end in ".<i>": the two layouts
// never name the same key, whatever the namespaces.
func spreadKeys(ns string, i, n int) []string {
	lo, hi := i*clusterSlots/n, (i+1)*clusterSlots/n
	if q := (hi - lo) / 4; q > 0 {
		lo, hi = lo+q, hi-q
	}
	prefix := ns + "." + strconv.Itoa(i) + "~"
	// Each suffix lands in [lo, hi) with odds (hi-lo)/16384: about 2n tries
	// (at most 2048, for 1024 shards), a few ms for a whole namespace.
	for s := 0; ; s++ {
		tag := prefix + strconv.Itoa(s)
		if slot := int(crc16(tag)) % clusterSlots; slot >= lo && slot < hi {
			return tagKeys("{" + tag + "}")
		}
	}
}

// clusterSlots is Redis Cluster's slot count.
const clusterSlots = 16384

// keySlot is the cluster slot of key, as CLUSTER KEYSLOT computes it: the
// CRC16 of its hash tag (the text between the first '{' and the next '}',
// when not empty), else of the whole key, mod 16384.
func keySlot(key string) int {
	for i := 0; i < len(key); i++ {
		if key[i] != '{' {
			continue
		}
		for j := i + 1; j < len(key); j++ {
			if key[j] == '}' {
				if j > i+1 {
					key = key[i+1 : j]
				}
				return int(crc16(key)) % clusterSlots
			}
		}
		break
	}
	return int(crc16(key)) % clusterSlots
}

// crc16 is the CRC16 of Redis Cluster (the Redis Cluster specification,
// appendix A): CCITT, polynomial 0x1021, initial value 0 (XMODEM).
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// layout is a Store's choice of layout, made once (resolve). keys, the
// Store's keys[shard], holds layout 2's names until then and is written
// only by resolve, before done is set: every operation calls resolve, so
// reads keys after done, and never sees the write race.
type layout struct {
	mu   sync.Mutex // serializes resolve's round trips
	done atomic.Bool
	old  [][]string // layout 1's keys, for resolve
}

// resolve reads (or, for a namespace without one, chooses and records) the
// namespace's layout and sets s.keys to it, once; until it succeeds, every
// operation tries again. An error that retrying will not heal wraps
// durable.ErrUnrecoverable, as a claim's would.
func (s *Store) resolve(ctx context.Context) error {
	l := &s.layout
	if l.done.Load() {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done.Load() {
		return nil
	}
	v, err := s.readLayout(ctx)
	if err != nil {
		if unrecoverable(err) {
			return fmt.Errorf("%w: rediswheel: namespace %q: layout: %w", durable.ErrUnrecoverable, s.ns, err)
		}
		return fmt.Errorf("rediswheel: namespace %q: layout: %w", s.ns, err)
	}
	switch v {
	case layoutTags:
		s.keys = l.old
	case layoutSpread:
	default:
		return fmt.Errorf("%w: rediswheel: namespace %q has layout %q, unknown to this version (a newer one wrote it)",
			durable.ErrUnrecoverable, s.ns, v)
	}
	l.done.Store(true)
	return nil
}

// readLayout returns the namespace's recorded layout, recording one first
// if there is none.
func (s *Store) readLayout(ctx context.Context) (string, error) {
	key := layoutKey(s.ns)
	v, err := s.client.Get(ctx, key).Result()
	if err != redis.Nil {
		return v, err
	}
	// No record: a namespace used before layout 2 existed has some key of
	// layout 1 (a task in any state, or a shard's ctl hash, which keeps its
	// token counter once a task was ever claimed).
	cmds := make([]*redis.IntCmd, len(s.layout.old))
	_, err = s.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, keys := range s.layout.old {
			cmds[i] = p.Exists(ctx, keys...) // one shard's keys: one slot
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	want := layoutSpread
	for _, c := range cmds {
		if c.Val() > 0 {
			want = layoutTags
			break
		}
	}
	set, err := s.client.SetNX(ctx, key, want, 0).Result()
	if err != nil || set {
		return want, err
	}
	return s.client.Get(ctx, key).Result() // another process recorded one first
}
