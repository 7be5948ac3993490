package timingwheel

import (
	"testing"
	"time"
)

// BenchmarkTickerCost measures what a Ticker costs to make and stop, in time,
// bytes and allocations, next to a channel Timer of the same wheel and to
// package time's Ticker and Timer, in one run (benchstat -col /impl,/op).
// The duration is an hour, so nothing fires: each iteration is one arming and
// one Stop that stopped it, which the wheel's counters confirm.
//
// A wheel Ticker is its channel, the node the wheel keeps (104 bytes in a
// 112-byte size class: a channel Timer's node plus period and next tick) and
// a 16-byte Ticker; a channel Timer has the same channel and node, and a
// 48-byte Timer instead. d is an hour, beyond strongHorizon, so both pay for
// the weak pointer and the cleanup (BenchmarkNewTimerStop has a short d).
func BenchmarkTickerCost(b *testing.B) {
	const d = time.Hour
	for _, bc := range []struct {
		impl, op string
		run      func(tw *TimingWheel)
	}{
		{"wheel", "NewTicker", func(tw *TimingWheel) { tw.NewTicker(d).Stop() }},
		{"wheel", "NewTimer", func(tw *TimingWheel) { tw.NewTimer(d).Stop() }},
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
