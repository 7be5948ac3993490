// Package measure holds what the workload programs share: process CPU time,
// GC counters, busy cores, quantiles and the JSON line each run emits.
package measure

import (
	"encoding/json"
	"io"
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// CPU is the user plus system time the process has used so far.
func CPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic("measure: getrusage: " + err.Error())
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// Sched is a snapshot of the counters that say what a workload made the
// runtime and the kernel do: heap allocations, goroutines created, the
// process's context switches and the GC's estimated CPU.
type Sched struct {
	Allocs, Bytes, Goroutines, CtxSwitches uint64
	GCCPU                                  time.Duration
}

var schedMetrics = []string{
	"/gc/heap/allocs:objects",
	"/gc/heap/allocs:bytes",
	"/sched/goroutines-created:goroutines",
	"/cpu/classes/gc/total:cpu-seconds",
}

// ReadSched reads Sched; call it outside measured loops.
func ReadSched() Sched {
	samples := make([]metrics.Sample, len(schedMetrics))
	for i, name := range schedMetrics {
		samples[i].Name = name
	}
	metrics.Read(samples)
	u := func(i int) uint64 {
		if samples[i].Value.Kind() != metrics.KindUint64 {
			return 0 // not in this Go version
		}
		return samples[i].Value.Uint64()
	}
	var s Sched
	s.Allocs, s.Bytes, s.Goroutines = u(0), u(1), u(2)
	if samples[3].Value.Kind() == metrics.KindFloat64 {
		s.GCCPU = time.Duration(samples[3].Value.Float64() * 1e9)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		s.CtxSwitches = uint64(ru.Nvcsw + ru.Nivcsw)
	}
	return s
}

// GC is a snapshot of the collector's counters.
type GC struct {
	Cycles uint32
	Pause  time.Duration
}

// ReadGC stops the world briefly; call it outside measured loops.
func ReadGC() GC {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return GC{Cycles: m.NumGC, Pause: time.Duration(m.PauseTotalNs)}
}

// Spin keeps n goroutines running a tight loop until the returned stop
// function is called, so that timer goroutines compete for every core.
func Spin(n int) (stop func()) {
	var done atomic.Bool
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := uint64(1)
			for !done.Load() {
				for range 1000 {
					x = x*6364136223846793005 + 1442695040888963407
				}
			}
			sink.Add(x)
		}()
	}
	return func() { done.Store(true); wg.Wait() }
}

var sink atomic.Uint64

// Quantile returns the q-quantile (0 ≤ q ≤ 1) of sorted, by nearest rank.
func Quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(q*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// Summary describes a distribution of lateness (or any duration).
type Summary struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50_ms"`
	P90   float64 `json:"p90_ms"`
	P99   float64 `json:"p99_ms"`
	Max   float64 `json:"max_ms"`
	// CDF holds the 0.5%, 1%, … 100% quantiles in milliseconds, for plots.
	CDF []float64 `json:"cdf_ms,omitempty"`
}

// Summarize sorts d in place and summarizes it; withCDF adds 200 quantiles.
func Summarize(d []time.Duration, withCDF bool) Summary {
	slices.Sort(d)
	s := Summary{
		Count: len(d),
		P50:   Ms(Quantile(d, 0.50)),
		P90:   Ms(Quantile(d, 0.90)),
		P99:   Ms(Quantile(d, 0.99)),
		Max:   Ms(Quantile(d, 1)),
	}
	if withCDF && len(d) > 0 {
		for i := 1; i <= 200; i++ {
			s.CDF = append(s.CDF, Ms(Quantile(d, float64(i)/200)))
		}
	}
	return s
}

// Ms converts to fractional milliseconds.
func Ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// Emit writes v as one JSON line.
func Emit(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// MaxRSS is the process's peak resident set size so far (ru_maxrss).
func MaxRSS() (bytes int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic("measure: getrusage: " + err.Error())
	}
	return int64(ru.Maxrss) << 10 // kilobytes on Linux (an int32 on 386)
}
