package timingwheel

// How a bucket stores its timers: in blocks of blockSize pointers, so that
// a bucket grows and shrinks by one block at a time and never copies what it
// holds. A timer's slot is its index in the bucket counted across the
// blocks: block slot>>blockBits, offset slot&blockMask.
//
// The first block is the bucket's own, and grows by doubling up to
// blockSize, as a slice would: a bucket of a few timers holds a few
// pointers. Past blockSize, the bucket takes whole blocks from its shard's
// pool and gives each back as soon as it empties: at the end, when Stops
// and Resets take timers out (removal moves the last timer into the hole,
// so a bucket's timers are always its first indices), or at the front, as
// a flush takes them out. So a bucket holds at most one block more than
// its timers need, and a bucket that grows by what another gave back (a
// flush that re-arms Tickers into the next bucket, Resets that move timers
// between buckets of millions) allocates nothing.
//
// With one array per bucket, growing a bucket of a million timers copied it
// (append's doubling) and shrinking it copied it again: a Reset of a random
// timer among 10M pending allocated 11-14 B on average, and its GC cost
// more per cycle than the runtime's timers (docs/design/blocks.md).

// blockBits sets the block: 64 pointers (512 B), as a level's page. The
// garbage collector (Go 1.26's, which marks objects of up to 512 B span by
// span) marks a wheel of 2M timers shuffled by random Resets in 157-198 ms
// of CPU a cycle with blocks of 32 or 64 pointers, 221-401 ms with 128, 256
// or 4096, against 181-200 ms for the runtime's timers (getrusage over
// runtime.GC, 2-5 runs each, docs/design/blocks.md). A bucket of up to 64
// timers holds one array of its own, grown by doubling.
const (
	blockBits = 6
	blockSize = 1 << blockBits
	blockMask = blockSize - 1
)

type block [blockSize]*Timer

// keptBlockTable is the largest block table (in entries of 24 B) an emptied
// bucket keeps for its next rotation: 32 entries, 2048 timers, the bucket of
// a steady load (1000 Tickers of one period move from one to the next at
// every tick: TestTickersInOneBucketDoNotChurn), and at most 768 B.
const keptBlockTable = 32

// end returns the index past b's last timer.
func (b *bucket) end() int {
	k := len(b.blocks)
	if k == 0 {
		return 0
	}
	return (k-1)<<blockBits + len(b.blocks[k-1])
}

// all yields b's timers not yet taken, in slot order.
func (b *bucket) all(yield func(*Timer) bool) {
	from := int(b.taken)
	for j := from >> blockBits; j < len(b.blocks); j++ {
		c := b.blocks[j]
		if j == from>>blockBits {
			c = c[from&blockMask:]
		}
		for _, t := range c {
			if !yield(t) {
				return
			}
		}
	}
}

// grow makes room for one more timer in b, whose last block is full (or
// which has none): the first block doubles, up to blockSize; past that b
// gets another block. Positions, and so slots, stay.
func (b *bucket) grow() {
	if len(b.blocks) == 0 {
		b.blocks = append(b.blocks, nil) // the table kept from the last rotation, if any
	}
	k := len(b.blocks)
	if first := b.blocks[0]; k == 1 && cap(first) < blockSize {
		var c []*Timer
		if n := max(1, 2*cap(first)); n < blockSize {
			c = make([]*Timer, len(first), n)
		} else {
			c = b.shard.newBlock()[:len(first)]
		}
		copy(c, first)
		b.blocks[0] = c
		return
	}
	b.blocks = append(b.blocks, b.shard.newBlock())
}

// dropLastBlock gives back b's last block, emptied by a removal; b is not
// empty, so the block is not its first. b's table shrinks only when it is
// sixteen times what b needs, so that timers moving back and forth between
// two buckets do not reallocate their tables (a table costs 24 B a block of
// 64 timers: so the table of a bucket shrunk from its peak adds at most 6 B
// to each timer it holds).
func (b *bucket) dropLastBlock() {
	k := len(b.blocks) - 1
	b.shard.freeBlock(b.blocks[k])
	b.blocks[k] = nil
	b.blocks = b.blocks[:k]
	if c := cap(b.blocks); c > keptBlockTable && k < c/16 {
		b.blocks = append(make([][]*Timer, 0, 2*k), b.blocks...)
	}
}

// resetBlocks readies an emptied bucket's storage for its next rotation:
// its first block and a table of up to keptBlockTable entries stay with it,
// the other blocks go back to the pool.
func (b *bucket) resetBlocks() {
	s := b.shard
	if len(b.blocks) == 0 {
		return
	}
	for i, c := range b.blocks[1:] {
		if c != nil { // nil once a flush took it
			s.freeBlock(c)
		}
		b.blocks[1+i] = nil
	}
	if cap(b.blocks) > keptBlockTable {
		s.freeBlock(b.blocks[0])
		b.blocks = nil
		return
	}
	b.blocks = b.blocks[:1]
	b.blocks[0] = b.blocks[0][:0]
}

// newBlock returns an empty block, from the pool if it has one.
// Callers hold s.mu.
func (s *shard) newBlock() []*Timer {
	n := len(s.freeBlocks)
	if n == 0 {
		return new(block)[:0]
	}
	c := s.freeBlocks[n-1]
	s.freeBlocks[n-1] = nil
	s.freeBlocks = s.freeBlocks[:n-1]
	return c[:0]
}

// freeBlock takes back c, whose timers were all taken out (each entry set
// to nil), into the pool if it is a whole block and the pool is within its
// bound (see trimBlocks); otherwise leaves it to the collector. Callers
// hold s.mu.
func (s *shard) freeBlock(c []*Timer) {
	if cap(c) == blockSize {
		s.freeBlocks = append(s.freeBlocks, (*block)(c[:blockSize]))
	}
	s.trimBlocks()
}

// trimBlocks keeps the pool within its bound, one block slot per pending
// timer (8 bytes a timer): enough for the blocks that buckets give back
// and take again as timers move between them, and little enough that the
// pool follows what is pending. It is checked whenever a block or a bucket
// empties, so a pool kept for a million timers goes when they are stopped.
// Callers hold s.mu.
func (s *shard) trimBlocks() {
	if s.counters.pending <= 1 {
		s.spareNears = nil // and the lists kept for scans (see keepNear)
	}
	n := len(s.freeBlocks)
	keep := min(n, s.counters.pending/blockSize)
	if keep == n {
		return
	}
	clear(s.freeBlocks[keep:])
	switch {
	case keep == 0:
		s.freeBlocks = nil
	case cap(s.freeBlocks) > 64 && keep < cap(s.freeBlocks)/4:
		s.freeBlocks = append(make([]*block, 0, 2*keep), s.freeBlocks[:keep]...)
	default:
		s.freeBlocks = s.freeBlocks[:keep]
	}
}
