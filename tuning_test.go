package timingwheel

import (
	"sync"
	"testing"
	"time"
)

// The measurements behind the tuning constants: each constant's comment
// cites the figure one of these benchmarks gives.

// BenchmarkFlushChunk measures the advancer's longest hold of a shard's lock:
// one flush of a chunk of timers out of a due bucket, cascading them down a
// level ("cascade") or firing them ("fire": the callbacks are handed over
// after the lock is released, and that is not measured here). See chunk.
func BenchmarkFlushChunk(b *testing.B) {
	for _, tc := range []struct {
		name string
		d    time.Duration // on an 8-slot 1 ms wheel: level 1 (slot 40-47 ms), or level 0
	}{{"cascade", 41 * time.Millisecond}, {"fire", 5 * time.Millisecond}} {
		b.Run(tc.name, func(b *testing.B) {
			tw, clock := newManualWheel(b, time.Millisecond, 8)
			oneShard(tw)
			s := &tw.shards[0]
			var ready []func()
			// The clock moves to the bucket's start: on level 0 the due
			// tick, on level 1 the start of its 8 ms slot (the clock stays
			// a multiple of 8 ms there).
			lead := tc.d
			if tc.d >= 8*time.Millisecond {
				lead -= tc.d % (8 * time.Millisecond)
			}
			b.StopTimer()
			for i := 0; i < b.N; i++ {
				for range chunk {
					tw.AfterFunc(tc.d, noop)
				}
				clock.Advance(lead)
				bk, ok := tw.take(tw.queue.Now())
				if !ok {
					b.Fatal("no bucket due")
				}
				b.StartTimer()
				n, done := s.flush(bk, chunk, &ready)
				b.StopTimer()
				if n != chunk || !done {
					b.Fatalf("flushed %d timers (done %v), want all %d", n, done, chunk)
				}
				if fired := len(ready); (tc.name == "fire") != (fired == chunk) {
					b.Fatalf("%s: %d of %d timers fired", tc.name, fired, chunk)
				}
				ready = ready[:0]
				clock.Advance(8 * time.Millisecond) // past every cascaded timer
				tw.step()
				if tw.Len() != 0 {
					b.Fatalf("%d timers left pending", tw.Len())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*chunk), "ns/timer")
		})
	}
}

// BenchmarkCallbackHandover measures handing one fired AfterFunc callback to
// the default executor, a goroutine each, as time.AfterFunc does: what the
// caller pays, the goroutine's start (its run overlaps, on another P). See
// callerBudget.
func BenchmarkCallbackHandover(b *testing.B) {
	var e executor
	var wg sync.WaitGroup
	wg.Add(b.N)
	for i := 0; i < b.N; i++ {
		e.run(wg.Done)
	}
	b.StopTimer()
	wg.Wait()
}

// BenchmarkEveryNextSkips measures the maxSkips Next calls of Every that one
// run of a schedule may make to skip the runs merged into it. See maxSkips.
func BenchmarkEveryNextSkips(b *testing.B) {
	s := Every(time.Nanosecond)
	t := testEpoch
	for i := 0; i < b.N; i++ {
		for range maxSkips {
			t = s.Next(t)
		}
	}
	if !t.After(testEpoch) {
		b.Fatal("Next did not advance")
	}
}

// BenchmarkPLookup measures finding the calling P's shard hint: by the P's
// id, as lockShard does ("procPin"), and by the sync.Pool Get and Put it
// replaced ("pool"). See currentp.go.
func BenchmarkPLookup(b *testing.B) {
	tw, err := New(DefaultTick, DefaultWheelSize)
	if err != nil {
		b.Fatal(err)
	}
	defer tw.Stop()
	b.Run("impl=procPin", func(b *testing.B) {
		var h *shardHint
		for i := 0; i < b.N; i++ {
			h = &tw.hints[currentP()&tw.shardMask]
		}
		if h == nil || h.shard.Load() > tw.shardMask {
			b.Fatal("no hint looked up")
		}
	})
	b.Run("impl=pool", func(b *testing.B) {
		var local sync.Pool
		local.New = func() any { return &tw.hints[0] }
		var h *shardHint
		for i := 0; i < b.N; i++ {
			h = local.Get().(*shardHint)
			local.Put(h)
		}
		if h == nil {
			b.Fatal("no hint looked up")
		}
	})
}
