// Command idle measures what a library costs while it holds -n timers of
// which none is due for an hour: process CPU time (getrusage) over
// -duration, as a percentage of one core, and the library's own count of
// poller wake-ups over the same time where it keeps one. It prints one
// JSON line.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/internal/lib"
	"github.com/go-timingwheel/timingwheel/bench/internal/measure"
	"github.com/go-timingwheel/timingwheel/bench/internal/results"
)

type result = results.Idle

func main() {
	name := flag.String("lib", "wheel", "library: wheel, runtime or gozero")
	tick := flag.Duration("tick", time.Millisecond, "wheel tick")
	n := flag.Int("n", 1_000_000, "far-future timers")
	dur := flag.Duration("duration", 10*time.Second, "how long to watch")
	flag.Parse()
	if err := run(*name, *tick, *n, *dur); err != nil {
		fmt.Fprintln(os.Stderr, "idle:", err)
		os.Exit(1)
	}
}

func run(name string, tick time.Duration, n int, dur time.Duration) error {
	l, err := lib.New(lib.Config{Name: name, Tick: tick, Size: 512})
	if err != nil {
		return err
	}
	defer l.Close()
	res := result{Workload: "idle", Lib: name, GOMAXPROCS: runtime.GOMAXPROCS(0), N: n, DurationS: dur.Seconds()}
	if name != "runtime" {
		res.TickMs = measure.Ms(tick)
	}
	fired := 0
	r := rand.New(rand.NewPCG(11, 12))
	timers := make([]lib.Handle, n)
	for i := range timers {
		timers[i] = l.AfterFunc(time.Hour+time.Duration(r.Int64N(int64(time.Hour))), func() { fired++ })
	}
	l.Sync()
	// Let arming's garbage be collected and any start-up work settle.
	runtime.GC()
	time.Sleep(time.Second)

	w0, cpu0, t0 := l.Wakeups(), measure.CPU(), time.Now()
	time.Sleep(dur)
	cpu1, w1, elapsed := measure.CPU(), l.Wakeups(), time.Since(t0)

	res.CPUS = (cpu1 - cpu0).Seconds()
	res.CPUPercent = 100 * res.CPUS / elapsed.Seconds()
	res.Wakeups = -1
	if w0 >= 0 {
		res.Wakeups = w1 - w0
		res.WakeupsPerS = float64(res.Wakeups) / elapsed.Seconds()
	}
	for _, t := range timers {
		if !t.Stop() {
			return fmt.Errorf("a timer due in over an hour was no longer pending")
		}
	}
	return measure.Emit(os.Stdout, res)
}
