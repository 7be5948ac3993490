// Command accuracy measures when timers fire compared with when they were
// due: it arms -n timers due uniformly within -spread, records for each the
// time from just before arming to the start of its callback by the
// monotonic clock, and prints one JSON line with the count of early fires
// (callback started before the requested duration had elapsed) and the
// lateness distribution. -busy keeps every core busy with spinning
// goroutines while the timers run.
//
// Arm time is read before the library is called, so a library that reads
// its own clock a little later is never wrongly counted early; it can only
// hide an early fire shorter than the arming call itself.
package main

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/internal/lib"
	"github.com/go-timingwheel/timingwheel/bench/internal/measure"
	"github.com/go-timingwheel/timingwheel/bench/internal/results"
)

type result = results.Accuracy

func main() {
	name := flag.String("lib", "wheel", "library: wheel, runtime or gozero")
	tick := flag.Duration("tick", time.Millisecond, "wheel tick")
	size := flag.Int("size", 512, "wheel size (slots per level)")
	n := flag.Int("n", 100_000, "timers")
	spread := flag.Duration("spread", 2*time.Second, "deadlines are uniform in (0, spread]")
	busy := flag.Bool("busy", false, "keep every core busy with spinning goroutines")
	grace := flag.Duration("grace", 10*time.Second, "how long after the last deadline to wait for timers that have not fired")
	flag.Parse()
	if err := run(*name, *tick, *size, *n, *spread, *grace, *busy); err != nil {
		fmt.Fprintln(os.Stderr, "accuracy:", err)
		os.Exit(1)
	}
}

func run(name string, tick time.Duration, size, n int, spread, grace time.Duration, busy bool) error {
	l, err := lib.New(lib.Config{Name: name, Tick: tick, Size: size})
	if err != nil {
		return err
	}
	defer l.Close()
	res := result{Workload: "accuracy", Lib: name, Load: "idle", GOMAXPROCS: runtime.GOMAXPROCS(0), N: n, SpreadMs: measure.Ms(spread)}
	if name != "runtime" {
		res.TickMs = measure.Ms(tick)
	}
	if busy {
		res.Load = "busy"
		defer measure.Spin(runtime.GOMAXPROCS(0))()
	}

	r := rand.New(rand.NewPCG(5, 6))
	want := make([]time.Duration, n)
	for i := range want {
		want[i] = 1 + time.Duration(r.Int64N(int64(spread)))
	}
	// elapsed[i] is 0 until timer i fires: a library that falls behind
	// is reported with the timers it fired within the grace period.
	elapsed := make([]atomic.Int64, n)
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range want {
		armed := time.Now()
		l.AfterFunc(want[i], func() {
			elapsed[i].Store(max(int64(time.Since(armed)), 1))
			wg.Done()
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(spread + grace):
	}

	res.GraceS = grace.Seconds()
	lateness := make([]time.Duration, 0, n)
	for i := range elapsed {
		e := time.Duration(elapsed[i].Load())
		if e == 0 {
			continue
		}
		late := e - want[i]
		if late < 0 {
			res.Early++
			res.MaxEarlyMs = max(res.MaxEarlyMs, measure.Ms(-late))
		}
		lateness = append(lateness, late)
	}
	res.Fired = len(lateness)
	res.Lateness = measure.Summarize(lateness, true)
	return measure.Emit(os.Stdout, res)
}
