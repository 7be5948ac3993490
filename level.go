package timingwheel

// pageBits sets the page: 64 bucket pointers (512 B). A level's storage is a
// table of wheelSize/64 page pointers, made when the level gets its first
// bucket, and pages made as buckets need them; each is released when it
// empties (a shard keeps one page, and a level a table of at most keptTable
// pages, for reuse while the shard holds any bucket). So a wheel holds memory
// for the buckets it uses, not for its size: one AfterFunc(100 years) on
// New(time.Nanosecond, MaxWheelSize) costs one table of 16384 pointers
// (128 KiB) on the level it needs, one page and one bucket, all released when
// it fires or stops (TestStoppedTimersHoldNoMemory), where one full level of
// 2^20 buckets would be 40 MiB.
const (
	pageBits = 6
	pageSize = 1 << pageBits
)

// A level of a shard: level L has wheelSize slots of wheelSize^L ticks each.
type level struct {
	pages []*page // nil until the level holds a bucket
	live  int     // buckets allocated in this level
}

type page struct {
	buckets [pageSize]*bucket
	live    int // buckets allocated in this page
}

// freeBuckets is how many released buckets a shard keeps, with their first
// blocks (at most blockSize pointers each) and block tables (see
// keptBlockTable), for the next rotation: enough for the level-0 buckets a
// steady load cycles through in a few ticks, so that a bucket and its block
// are not reallocated every tick, and at most 21 KiB a shard.
const freeBuckets = 16

// keptTable is the largest page table (in pages) a level keeps when it
// empties, for the next timer that needs the level: a wheel of up to 4096
// slots keeps its table of at most 512 B, so that a timer alone on its
// level, armed and stopped in turn, does not allocate the table at every
// arming (TestAloneInItsBucketAllocatesOnlyTheTimer); a bigger table (a
// wheel of 2^20 slots has 16384 pages: 128 KiB) goes with the level.
const keptTable = 64

// freeIdle is how many released buckets a shard keeps once it holds no
// bucket at all: enough that a lightly loaded shard, whose one bucket comes
// and goes with each timer, allocates none, and little enough that a wheel
// whose timers were all stopped holds within a few KiB of a new wheel
// (TestStoppedTimersHoldNoMemory: 16 kept per shard left 9.8 KiB behind
// on 8 shards).
const freeIdle = 2

// bucketAt returns the bucket at index of level l, creating the level, its
// page and the bucket as needed. Callers hold s.mu.
func (s *shard) bucketAt(l int, index int64) *bucket {
	for len(s.levels) <= l {
		if n := len(s.levels); n < cap(s.levels) {
			s.levels = s.levels[:n+1] // as released, with its page table if it kept one (see release)
		} else {
			s.levels = append(s.levels, level{})
		}
	}
	lv := &s.levels[l]
	if lv.pages == nil {
		lv.pages = make([]*page, max(1, s.wheel.size>>pageBits))
	}
	p := lv.pages[index>>pageBits]
	if p == nil {
		if p = s.freePage; p != nil {
			s.freePage = nil
		} else {
			p = new(page)
		}
		lv.pages[index>>pageBits] = p
	}
	b := p.buckets[index&(pageSize-1)]
	if b == nil {
		if n := len(s.free); n > 0 {
			b, s.free[n-1] = s.free[n-1], nil
			s.free = s.free[:n-1]
		} else {
			b = &bucket{shard: s}
		}
		b.place, b.expiration = uint32(l)*MaxWheelSize+uint32(index), noExpiration
		p.buckets[index&(pageSize-1)] = b
		p.live++
		lv.live++
		s.buckets++
	}
	return b
}

// release takes b, empty and out of the delay queue (or vacant),
// out of its level, releasing the page and the level if they empty, and the
// levels above the last one that holds a bucket; b, one page and a small
// level's table are kept for reuse, and all but freeIdle buckets go when the
// shard holds none. It withdraws the last vacant buckets while they
// outnumber the others (see shard.vacant). Callers hold s.mu.
//
// The page and the small tables stay even when the shard holds no bucket:
// a timer alone in its shard (a lightly loaded server's, or each P's own
// in a parallel load whose other timers were armed on another P), armed
// and stopped in turn, would otherwise allocate them at every arming
// (TestAloneInItsShardAllocatesOnlyTheTimer; docs/design/vacant.md). What
// they hold is bounded per shard (a page of 512 B, tables of at most
// keptTable pages), not by the timers once pending.
func (s *shard) release(b *bucket) {
	s.drop(b)
	for !s.vacantFit(s.vacant.n) {
		a := s.vacant.oldest()
		s.wheel.queue.Remove(a) // nothing to do for one the queue dropped
		a.expiration = noExpiration
		s.drop(a)
	}
	if len(s.levels) == 0 && len(s.free) > freeIdle {
		clear(s.free[freeIdle:])
		s.free = s.free[:freeIdle]
	}
}

// vacantFit reports whether n vacant buckets keep the shard's bound: at
// most as many as the others, plus, on an early queue, one: the bucket a
// timer alone in its shard leaves when stopped, kept for its next arming,
// which lands in it again while its slot lasts. Left queued, it costs at
// most the one ring the early alarm was set for (delayqueue's lazy.go);
// withdrawn, every AfterFunc+Stop of a lone timer paid an Offer, a Remove
// and a release (docs/design/vacant.md).
func (s *shard) vacantFit(n int) bool {
	return 2*n <= s.buckets || n == 1 && s.wheel.queue.Early()
}

// drop takes b out of its level and of the vacant list, releasing the
// page, the level and the levels above the last that holds a bucket, and
// keeps b for reuse.
func (s *shard) drop(b *bucket) {
	s.unlistVacant(b)
	s.buckets--
	i := b.index()
	lv := &s.levels[b.level()]
	p := lv.pages[i>>pageBits]
	p.buckets[i&(pageSize-1)] = nil
	if p.live--; p.live == 0 {
		// Kept for the next page a level needs: a timer alone in its page,
		// armed and stopped in turn, would otherwise allocate a page
		// (512 B) at every arming now that Stop releases its bucket.
		lv.pages[i>>pageBits] = nil
		s.freePage = p
	}
	if lv.live--; lv.live == 0 && len(lv.pages) > keptTable {
		lv.pages = nil
	}
	for n := len(s.levels); n > 0 && s.levels[n-1].live == 0; n-- {
		s.levels = s.levels[:n-1]
	}
	if b.near != nil {
		s.keepNear(b.near)
		b.near = nil
	}
	if len(s.free) < freeBuckets {
		s.free = append(s.free, b)
	}
}
