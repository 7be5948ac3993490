package timingwheel

import (
	"runtime"
	"testing"
	"time"
)

// BenchmarkTickerCost measures what a Ticker costs to make and stop, in time,
// bytes and allocations, next to a channel Timer of the same wheel and to
// package time's Ticker and Timer, in one run (benchstat -col /impl,/op).
// The duration is an hour, so nothing fires: each iteration is one arming and
// one Stop that stopped it, which the wheel's counters confirm.
//
// A wheel Ticker is its channel, the node the wheel keeps (120 bytes in a
// 128-byte size class: a channel Timer's node plus period and next tick) and
// a 16-byte Ticker; a channel Timer has the same channel and node, and a
// 48-byte Timer instead. d is an hour, beyond strongHorizon, so both pay for
// the weak pointer and the cleanup; op=NewTimer100ms is a channel Timer
// within the horizon, which does not, beside them.
func BenchmarkTickerCost(b *testing.B) {
	const d = time.Hour
	for _, bc := range []struct {
		impl, op string
		run      func(tw *TimingWheel)
	}{
		{"wheel", "NewTicker", func(tw *TimingWheel) { tw.NewTicker(d).Stop() }},
		{"wheel", "NewTimer", func(tw *TimingWheel) { tw.NewTimer(d).Stop() }},
		// Within strongHorizon: the channel held strongly, no weak pointer.
		{"wheel", "NewTimer100ms", func(tw *TimingWheel) { tw.NewTimer(100 * time.Millisecond).Stop() }},
		{"runtime", "NewTicker", func(*TimingWheel) { time.NewTicker(d).Stop() }},
		{"runtime", "NewTimer", func(*TimingWheel) { time.NewTimer(d).Stop() }},
	} {
		b.Run("impl="+bc.impl+"/op="+bc.op, func(b *testing.B) {
			tw, err := New(DefaultTick, DefaultWheelSize)
			if err != nil {
				b.Fatal(err)
			}
			defer tw.Stop()
			before := tw.Stats()
			b.ReportAllocs()
			for b.Loop() {
				bc.run(tw)
			}
			if bc.impl != "wheel" {
				return
			}
			after := tw.Stats()
			if after.Stopped-before.Stopped != uint64(b.N) || after.Pending != before.Pending || after.Fired != before.Fired {
				b.Fatalf("not %d armings each stopped while pending: before %+v, after %+v", b.N, before, after)
			}
		})
	}
}

// BenchmarkTickerTick measures what the wheel spends per tick it delivers:
// 1000 tickers of 1 ms on a wheel advanced by hand on a FakeClock, every tick
// received, so each iteration is one wheel tick delivering 1000 ticks. The
// counters confirm every tick was sent and none dropped; ns/tick is the cost
// of a flush that sends and re-arms, without the poller's wake-up.
func BenchmarkTickerTick(b *testing.B) {
	const tickers = 1000
	clock := NewFakeClock(testEpoch)
	tw, err := newManual(time.Millisecond, DefaultWheelSize, WithClock(clock))
	if err != nil {
		b.Fatal(err)
	}
	defer tw.Stop()
	ts := make([]*Ticker, tickers)
	for i := range ts {
		ts[i] = tw.NewTicker(time.Millisecond)
	}
	before := tw.Stats()
	b.ReportAllocs()
	for b.Loop() {
		clock.Advance(time.Millisecond)
		tw.step()
		for _, tk := range ts {
			<-tk.C
		}
	}
	b.StopTimer()
	if sent := tw.Stats().Fired - before.Fired; sent != uint64(b.N)*tickers {
		b.Fatalf("%d ticks sent in %d wheel ticks of %d tickers", sent, b.N, tickers)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*tickers), "ns/tick")
	for _, tk := range ts {
		tk.Stop()
	}
}

// costPerOp returns the allocations and bytes one call of f allocates, on
// average over n calls.
func costPerOp(n int, f func()) (allocs, bytes float64) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range n {
		f()
	}
	runtime.ReadMemStats(&after)
	return float64(after.Mallocs-before.Mallocs) / float64(n), float64(after.TotalAlloc-before.TotalAlloc) / float64(n)
}

// TestTickerCostsNoMoreThanATimer holds the promise on Ticker: NewTicker and
// Stop allocate no more objects and no more bytes than NewTimer and Stop of a
// channel Timer armed as far out (both hold their channel weakly; a NewTimer
// within strongHorizon holds it strongly and costs less, see
// BenchmarkTickerCost).
func TestTickerCostsNoMoreThanATimer(t *testing.T) {
	tw, err := New(DefaultTick, DefaultWheelSize)
	if err != nil {
		t.Fatal(err)
	}
	defer tw.Stop()
	const n = 2000
	tickerAllocs, tickerBytes := costPerOp(n, func() { tw.NewTicker(time.Hour).Stop() })
	timerAllocs, timerBytes := costPerOp(n, func() { tw.NewTimer(time.Hour).Stop() })
	t.Logf("NewTicker+Stop: %.1f allocs, %.0f B; NewTimer(1h)+Stop: %.1f allocs, %.0f B", tickerAllocs, tickerBytes, timerAllocs, timerBytes)
	// The cleanups of earlier iterations allocate a little on their own
	// goroutine, into either count: allow a tenth of an object and 8 bytes.
	if tickerAllocs > timerAllocs+0.1 || tickerBytes > timerBytes+8 {
		t.Errorf("a Ticker costs more than a Timer: %.1f allocs and %.0f B against %.1f and %.0f", tickerAllocs, tickerBytes, timerAllocs, timerBytes)
	}
}
