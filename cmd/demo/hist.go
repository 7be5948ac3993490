package main

import (
	"math/bits"
	"sync/atomic"
	"time"
)

// histogram counts durations in buckets of at most 1/32 relative width (32
// per power of two microseconds), so its quantiles are within about 3% and it
// takes no memory per sample. Every method may be called concurrently.
type histogram struct {
	counts [64 * subBuckets]atomic.Int64
	n      atomic.Int64
	max    atomic.Int64
}

const subBuckets = 32

func bucketOf(us uint64) int {
	if us < subBuckets {
		return int(us)
	}
	shift := bits.Len64(us) - 6 // keep the top 5 bits below the leading one
	return (shift+1)*subBuckets + int(us>>shift) - subBuckets
}

// bucketTop is the largest value, in microseconds, that falls in bucket i.
func bucketTop(i int) uint64 {
	if i < subBuckets {
		return uint64(i)
	}
	shift := i/subBuckets - 1
	return (uint64(i%subBuckets+subBuckets)+1)<<shift - 1
}

func (h *histogram) add(d time.Duration) {
	h.counts[bucketOf(uint64(d/time.Microsecond))].Add(1)
	h.n.Add(1)
	for {
		m := h.max.Load()
		if int64(d) <= m || h.max.CompareAndSwap(m, int64(d)) {
			return
		}
	}
}

// quantile returns the upper edge of the bucket holding the q-quantile.
func (h *histogram) quantile(q float64) time.Duration {
	n := h.n.Load()
	if n == 0 {
		return 0
	}
	rank := int64(q*float64(n) + 0.5)
	rank = min(max(rank, 1), n)
	var seen int64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			return min(time.Duration(bucketTop(i))*time.Microsecond, h.maximum())
		}
	}
	return h.maximum()
}

func (h *histogram) maximum() time.Duration { return time.Duration(h.max.Load()) }
