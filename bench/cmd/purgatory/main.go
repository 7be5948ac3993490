// Command purgatory runs a load shaped like Kafka's TestPurgatoryPerformance:
// requests arrive as a Poisson process at -rate per second; each arms a
// -timeout timer and completes after a log-normal latency with the given
// median (-p50) and 75th percentile (-p75); a request that completes first
// stops its timer, one that does not is expired by it. Most requests beat
// the timeout, so most timers are stopped, never fired: the way servers use
// timers.
//
// One goroutine drives the load from a seeded generator, so every library
// sees the same arrivals and latencies. It tracks completions in its own
// heap and sleeps between events; that cost is the same for every library
// and is measured alone with -lib none (timers replaced by a no-op).
//
// It prints one JSON line: process CPU seconds (getrusage), GC cycles and
// GC pause per million requests, the timeouts' lateness and early fires, and
// per request the allocations, goroutines created, context switches and GC
// CPU. -cpuprofile and -trace record the run for go tool pprof and go tool
// trace.
package main

import (
	"container/heap"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/pprof"
	"runtime/trace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/internal/lib"
	"github.com/go-timingwheel/timingwheel/bench/internal/measure"
	"github.com/go-timingwheel/timingwheel/bench/internal/results"
)

type result = results.Purgatory

type request struct {
	armed    time.Time
	timer    lib.Handle
	complete time.Duration // offset from start
}

// byCompletion is a min-heap of requests by completion time.
type byCompletion []*request

func (h byCompletion) Len() int           { return len(h) }
func (h byCompletion) Less(i, j int) bool { return h[i].complete < h[j].complete }
func (h byCompletion) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *byCompletion) Push(x any)        { *h = append(*h, x.(*request)) }
func (h *byCompletion) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

// none replaces the timers to measure the driver alone.
type none struct{}

func (none) Name() string                               { return "none" }
func (none) AfterFunc(time.Duration, func()) lib.Handle { return noop{} }
func (none) Sync()                                      {}
func (none) Pending() int                               { return -1 }
func (none) Wakeups() int64                             { return -1 }
func (none) Close()                                     {}

type noop struct{}

func (noop) Stop() bool               { return true }
func (noop) Reset(time.Duration) bool { return true }

func main() {
	name := flag.String("lib", "wheel", "library: wheel, runtime, gozero or none")
	rate := flag.Float64("rate", 100_000, "requests per second")
	dur := flag.Duration("duration", 10*time.Second, "how long requests arrive")
	timeout := flag.Duration("timeout", 100*time.Millisecond, "request timeout")
	p50 := flag.Duration("p50", 10*time.Millisecond, "median completion latency")
	p75 := flag.Duration("p75", 30*time.Millisecond, "75th percentile completion latency")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run to this file")
	traceFile := flag.String("trace", "", "write an execution trace of the run to this file")
	flag.Parse()
	if *traceFile != "" {
		f, err := os.Create(*traceFile)
		if err == nil {
			err = trace.Start(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "purgatory:", err)
			os.Exit(1)
		}
		defer trace.Stop()
	}
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err == nil {
			err = pprof.StartCPUProfile(f)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "purgatory:", err)
			os.Exit(1)
		}
		defer pprof.StopCPUProfile()
	}
	var l lib.Lib = none{}
	if *name != "none" {
		var err error
		if l, err = lib.New(lib.Config{Name: *name, Tick: time.Millisecond, Size: 512}); err != nil {
			fmt.Fprintln(os.Stderr, "purgatory:", err)
			os.Exit(1)
		}
	}
	defer l.Close()
	res := run(l, *rate, *dur, *timeout, *p50, *p75)
	if err := measure.Emit(os.Stdout, res); err != nil {
		fmt.Fprintln(os.Stderr, "purgatory:", err)
		os.Exit(1)
	}
}

func run(l lib.Lib, rate float64, dur, timeout, p50, p75 time.Duration) result {
	// Log-normal: ln(latency) ~ N(mu, sigma²); the 75th percentile of a
	// standard normal is 0.6745.
	mu := math.Log(float64(p50))
	sigma := (math.Log(float64(p75)) - mu) / 0.6745
	r := rand.New(rand.NewPCG(9, 10))
	latency := func() time.Duration {
		// Latencies past the timeout all behave alike (the timer fires,
		// Stop then fails); capping them bounds the drain at the end.
		return min(time.Duration(math.Exp(mu+sigma*r.NormFloat64())), 2*timeout)
	}

	res := result{Workload: "purgatory", Lib: l.Name(), GOMAXPROCS: runtime.GOMAXPROCS(0), Rate: rate,
		DurationS: dur.Seconds(), TimeoutMs: measure.Ms(timeout), P50Ms: measure.Ms(p50), P75Ms: measure.Ms(p75)}
	var timedOut, early atomic.Int64
	var latMu sync.Mutex
	var lateness []time.Duration
	var peakHeap atomic.Uint64
	stopSampling := sampleHeap(&peakHeap)

	runtime.GC()
	gc0, sc0, cpu0, w0 := measure.ReadGC(), measure.ReadSched(), measure.CPU(), l.Wakeups()
	start := time.Now()
	var pending byCompletion
	nextArrival := time.Duration(0)
	for {
		now := time.Since(start)
		for nextArrival <= now && nextArrival < dur {
			req := &request{complete: now + latency()}
			req.armed = time.Now()
			req.timer = l.AfterFunc(timeout, func() {
				late := time.Since(req.armed) - timeout
				if late < 0 {
					early.Add(1)
				}
				timedOut.Add(1)
				latMu.Lock()
				lateness = append(lateness, late)
				latMu.Unlock()
			})
			heap.Push(&pending, req)
			res.Requests++
			nextArrival += time.Duration(r.ExpFloat64() / rate * float64(time.Second))
		}
		for len(pending) > 0 && pending[0].complete <= now {
			req := heap.Pop(&pending).(*request)
			if req.timer.Stop() {
				res.StopsTrue++
			}
		}
		next := time.Duration(math.MaxInt64)
		if nextArrival < dur {
			next = nextArrival
		}
		if len(pending) > 0 {
			next = min(next, pending[0].complete)
		}
		if next == math.MaxInt64 {
			break
		}
		if wait := next - time.Since(start); wait > 0 {
			time.Sleep(wait)
		}
	}
	// Every request has completed or timed out; wait for the callbacks of
	// the timeouts. go-zero's Stop reports true whether or not it removed
	// the timer, so there the wait is for the last timeout to be due.
	l.Sync()
	if l.Name() == "gozero" {
		time.Sleep(timeout + 20*time.Millisecond)
	}
	for res.StopsTrue+timedOut.Load() < res.Requests && time.Since(start) < dur+timeout+10*time.Second {
		time.Sleep(time.Millisecond)
	}
	cpu1, sc1, gc1, w1, elapsed := measure.CPU(), measure.ReadSched(), measure.ReadGC(), l.Wakeups(), time.Since(start)
	stopSampling()

	perM := 1e6 / float64(res.Requests)
	res.TimedOut = timedOut.Load()
	res.Completed = res.Requests - res.TimedOut
	res.EarlyTimeouts = early.Load()
	res.CPUSPerM = (cpu1 - cpu0).Seconds() * perM
	res.GCCyclesPerM = float64(gc1.Cycles-gc0.Cycles) * perM
	res.GCPauseMsPerM = measure.Ms(gc1.Pause-gc0.Pause) * perM
	res.PeakHeapMB = float64(peakHeap.Load()) / (1 << 20)
	perReq := 1 / float64(res.Requests)
	res.AllocsPerReq = float64(sc1.Allocs-sc0.Allocs) * perReq
	res.BytesPerReq = float64(sc1.Bytes-sc0.Bytes) * perReq
	res.GoroutinesPerReq = float64(sc1.Goroutines-sc0.Goroutines) * perReq
	res.CtxSwitchPerReq = float64(sc1.CtxSwitches-sc0.CtxSwitches) * perReq
	res.GCCPUNsPerReq = float64(sc1.GCCPU-sc0.GCCPU) * perReq
	res.Wakeups = -1
	if w0 >= 0 {
		res.Wakeups = w1 - w0
		res.WakeupsPerTick = float64(res.Wakeups) / float64(elapsed/time.Millisecond) // a 1 ms tick
	}
	latMu.Lock()
	res.Lateness = measure.Summarize(lateness, false)
	latMu.Unlock()
	return res
}

// sampleHeap records the largest live heap seen every 50 ms.
func sampleHeap(peak *atomic.Uint64) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(50 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-t.C:
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak.Load() {
					peak.Store(m.HeapAlloc)
				}
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
