// Command burst arms -n timers all due within the same -window and measures
// how the library copes when they expire together: the time from the end of
// the window until every callback has started (drain), the lateness of each
// callback against its own deadline, and the process CPU time (getrusage)
// from the end of arming until the last callback started. Callbacks do
// almost nothing, so the figures are the library's cost of expiring and
// dispatching. It prints one JSON line.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/internal/lib"
	"github.com/go-timingwheel/timingwheel/bench/internal/measure"
	"github.com/go-timingwheel/timingwheel/bench/internal/results"
)

type result = results.Burst

func main() {
	name := flag.String("lib", "wheel", "library: wheel, wheel-pool, wheel-inline, runtime or gozero")
	workers := flag.Int("workers", runtime.GOMAXPROCS(0), "workers for wheel-pool")
	n := flag.Int("n", 1_000_000, "timers")
	window := flag.Duration("window", 100*time.Millisecond, "every deadline falls in one window this long")
	lead := flag.Duration("lead", 8*time.Second, "the window starts this long after arming begins")
	flag.Parse()
	if err := run(*name, *workers, *n, *window, *lead); err != nil {
		fmt.Fprintln(os.Stderr, "burst:", err)
		os.Exit(1)
	}
}

func run(name string, workers, n int, window, lead time.Duration) error {
	l, err := lib.New(lib.Config{Name: name, Tick: time.Millisecond, Size: 512, Workers: workers})
	if err != nil {
		return err
	}
	defer l.Close()
	res := result{Workload: "burst", Lib: name, GOMAXPROCS: runtime.GOMAXPROCS(0), N: n, WindowMs: measure.Ms(window)}
	if name == "wheel-pool" {
		res.Lib = fmt.Sprintf("wheel-pool(%d)", workers)
	}

	r := rand.New(rand.NewPCG(7, 8))
	due := make([]time.Duration, n) // offsets from start
	for i := range due {
		due[i] = lead + time.Duration(r.Int64N(int64(window)))
	}
	started := make([]time.Duration, n)
	var count atomic.Int64
	done := make(chan struct{})
	start := time.Now()
	for i := range due {
		d := due[i] - time.Since(start)
		if d <= 0 {
			return fmt.Errorf("arming %d timers took longer than -lead %v", n, lead)
		}
		l.AfterFunc(d, func() {
			started[i] = time.Since(start)
			if count.Add(1) == int64(n) {
				close(done)
			}
		})
	}
	l.Sync()
	armed := time.Since(start)
	res.ArmS = armed.Seconds()
	if armed >= lead {
		return fmt.Errorf("arming %d timers took %v, longer than -lead %v", n, armed, lead)
	}
	runtime.GC()
	gc0, cpu0 := measure.ReadGC(), measure.CPU()

	peak := 0
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(lead + window + 60*time.Second)
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			peak = max(peak, runtime.NumGoroutine())
		case <-deadline:
			return fmt.Errorf("%d of %d callbacks had not started 60 s after the window", n-int(count.Load()), n)
		}
	}
	cpu1, gc1 := measure.CPU(), measure.ReadGC()

	last := time.Duration(0)
	lateness := make([]time.Duration, n)
	for i := range started {
		last = max(last, started[i])
		lateness[i] = started[i] - due[i]
		if lateness[i] < 0 {
			res.Early++
		}
	}
	res.DrainMs = measure.Ms(last - lead - window)
	res.AllByMs = measure.Ms(last - lead)
	res.CPUS = (cpu1 - cpu0).Seconds()
	res.GCCycles = gc1.Cycles - gc0.Cycles
	res.GCPauseMs = measure.Ms(gc1.Pause - gc0.Pause)
	res.Lateness = measure.Summarize(lateness, false)
	res.PeakGoroutines = peak
	return measure.Emit(os.Stdout, res)
}
