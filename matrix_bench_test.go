package timingwheel

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkMatrix measures every common operation at every horizon with 0
// to 1M other timers pending, on a New(time.Millisecond, 512) wheel
// ("wheel=new") and on the default wheel through the package-level
// functions ("wheel=default"), each cell once on the wheel ("impl=wheel")
// and once on package time and context ("impl=runtime"), next to each
// other:
//
//	BenchmarkMatrix/wheel=new/op=resetlater/pending=1k/d=10s/impl=wheel
//
// benchstat -col '/impl@(runtime wheel)' gives the ratio of each cell;
// bench/matrix.sh runs it in interleaved rounds and writes the table of
// docs/BENCHMARKS.md. BENCH_MATRIX_PENDING (say "0,1k") limits the pending
// counts.
//
// Pending timers are due in 5 to 6 hours, later than any deadline a cell
// sets (at most twice its horizon, 4 h), so that every measured timer goes
// in front of them and none of them fires during a run. A pending count's
// timers are armed once for both sides (the wheel's on the wheel, the
// runtime's with time.AfterFunc), by one goroutine per P so that every P's
// share of them is alike, and stay armed for all that count's cells, both
// sides' included: neither side's operations touch the other's timers
// (the wheel's own alarm is one runtime timer, moved at most once a tick).
//
// Every cell checks that it measured the operation it names (see the
// matrixOps): a Stop that returns false, a Reset that finds its timer
// fired, a context whose Err is not context.Canceled after cancel, and on
// the wheel any timer counted in Stats.Fired, is a fire. Fires are reported
// as fires/op; a cell with more than one in a thousand iterations (and
// more than one) fails.
// Only a stall of the benchmark's goroutine for a whole horizon between two
// calls lets a timer fire, so at 1 ms and 10 ms a loaded machine may show
// a few. On the runtime side a NewTimer or NewTicker fire cannot be seen
// (Go 1.23 channel timers); there only the wheel's count says it happens.
func BenchmarkMatrix(b *testing.B) {
	pendings := matrixPendings(b)
	for _, wheel := range []string{"new", "default"} {
		b.Run("wheel="+wheel, func(b *testing.B) {
			var (
				api   matrixAPI
				stats func() Stats
			)
			switch wheel {
			case "new":
				tw, err := New(time.Millisecond, 512)
				if err != nil {
					b.Fatal(err)
				}
				defer tw.Stop()
				api, stats = wheelAPI(tw), tw.Stats
			case "default":
				api, stats = defaultAPI(), Default().Stats
			}
			for _, p := range pendings {
				pop := &matrixPopulation{n: p.n, wheel: api}
				for _, op := range matrixOps {
					for _, d := range matrixHorizons {
						for _, side := range []struct {
							impl  string
							api   matrixAPI
							stats func() Stats
						}{{"wheel", api, stats}, {"runtime", runtimeAPI(), nil}} {
							name := fmt.Sprintf("op=%s/pending=%s/d=%s/impl=%s", op.name, p.name, d.name, side.impl)
							b.Run(name, func(b *testing.B) {
								pop.arm(b)
								c := &matrixCell{B: b, api: side.api, d: d.d}
								var fired0 uint64
								if side.stats != nil {
									fired0 = side.stats().Fired
								}
								b.ReportAllocs()
								b.ResetTimer()
								op.run(c)
								b.StopTimer()
								if side.stats != nil {
									c.fires = max(c.fires, int(side.stats().Fired-fired0))
								}
								c.check()
							})
						}
					}
				}
				pop.stop(b)
			}
		})
	}
}

// matrixHorizons are the durations the cells arm their timers for.
var matrixHorizons = []struct {
	name string
	d    time.Duration
}{
	{"1ms", time.Millisecond},
	{"10ms", 10 * time.Millisecond},
	{"1s", time.Second},
	{"10s", 10 * time.Second},
	{"2h", 2 * time.Hour},
}

type matrixPending struct {
	name string
	n    int
}

// matrixPendings are the pending counts, all of them or those
// BENCH_MATRIX_PENDING names.
func matrixPendings(b *testing.B) []matrixPending {
	all := []matrixPending{{"0", 0}, {"1", 1}, {"1k", 1_000}, {"1M", 1_000_000}}
	env := os.Getenv("BENCH_MATRIX_PENDING")
	if env == "" {
		return all
	}
	var out []matrixPending
	for _, name := range strings.Split(env, ",") {
		i := slices.IndexFunc(all, func(p matrixPending) bool { return p.name == name })
		if i < 0 {
			b.Fatalf("BENCH_MATRIX_PENDING: %q is none of 0, 1, 1k, 1M", name)
		}
		out = append(out, all[i])
	}
	return out
}

// matrixAPI is one side of a cell: the wheel's functions or package time's
// and context's. Both are called through these func values, one indirect
// call per operation alike.
type matrixAPI struct {
	afterFunc   func(time.Duration, func()) stopper
	newTimer    func(time.Duration) stopper
	withTimeout func(context.Context, time.Duration) (context.Context, context.CancelFunc)
	newTicker   func(time.Duration) interface{ Stop() }
}

func wheelAPI(tw *TimingWheel) matrixAPI {
	return matrixAPI{
		afterFunc:   func(d time.Duration, f func()) stopper { return tw.AfterFunc(d, f) },
		newTimer:    func(d time.Duration) stopper { return tw.NewTimer(d) },
		withTimeout: tw.WithTimeout,
		newTicker:   func(d time.Duration) interface{ Stop() } { return tw.NewTicker(d) },
	}
}

// defaultAPI is the package-level functions, as a program that replaced
// time.AfterFunc by timingwheel.AfterFunc calls them.
func defaultAPI() matrixAPI {
	return matrixAPI{
		afterFunc:   func(d time.Duration, f func()) stopper { return AfterFunc(d, f) },
		newTimer:    func(d time.Duration) stopper { return NewTimer(d) },
		withTimeout: WithTimeout,
		newTicker:   func(d time.Duration) interface{ Stop() } { return NewTicker(d) },
	}
}

func runtimeAPI() matrixAPI {
	return matrixAPI{
		afterFunc:   func(d time.Duration, f func()) stopper { return time.AfterFunc(d, f) },
		newTimer:    func(d time.Duration) stopper { return time.NewTimer(d) },
		withTimeout: context.WithTimeout,
		newTicker:   func(d time.Duration) interface{ Stop() } { return time.NewTicker(d) },
	}
}

// matrixFires counts the calls of matrixFire, the callback of every timer
// a cell arms; populationFire is the pending timers' (none may run).
var matrixFires, populationFires atomic.Int64

func matrixFire()     { matrixFires.Add(1) }
func populationFire() { populationFires.Add(1) }

// matrixPopulation is a pending count's timers, on the wheel and on the
// runtime, armed by the first cell that needs them.
type matrixPopulation struct {
	n             int
	wheel         matrixAPI
	armed         bool
	timers        [2][]stopper // the wheel's, the runtime's
	runtimeFired0 int64
}

// arm arms the timers, unless they are armed already.
func (p *matrixPopulation) arm(b *testing.B) {
	if p.armed || p.n == 0 {
		return
	}
	b.StopTimer()
	defer b.StartTimer()
	for i, api := range []matrixAPI{p.wheel, runtimeAPI()} {
		p.timers[i] = armSpread(api.afterFunc, p.n)
	}
	p.armed = true
	p.runtimeFired0 = populationFires.Load()
	runtime.GC() // the arming's garbage is not the cells'
}

// armSpread arms n timers due in 5 h to 6 h, from one goroutine per P,
// all running at once, so that each P holds its share, as the runtime's
// per-P heaps and the wheel's per-P shards do in a server.
func armSpread(afterFunc func(time.Duration, func()) stopper, n int) []stopper {
	ts := make([]stopper, n)
	procs := runtime.GOMAXPROCS(0)
	var started atomic.Int32
	var wg sync.WaitGroup
	for g := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for started.Add(1); started.Load() < int32(procs); {
				// Spin until every goroutine runs, each on a P of its own.
			}
			r := rand.New(rand.NewPCG(uint64(g), uint64(n)))
			for i := g; i < n; i += procs {
				ts[i] = afterFunc(5*time.Hour+time.Duration(r.Int64N(int64(time.Hour))), populationFire)
			}
		}()
	}
	wg.Wait()
	return ts
}

// stop stops the timers, checking that none had fired.
func (p *matrixPopulation) stop(b *testing.B) {
	for _, ts := range p.timers {
		for _, t := range ts {
			if !t.Stop() {
				b.Fatal("a pending timer of the population had fired: its deadline is not past the run")
			}
		}
	}
	if populationFires.Load() != p.runtimeFired0 {
		b.Fatal("a pending timer of the population fired")
	}
	p.timers, p.armed = [2][]stopper{}, false
}

// matrixCell is one cell's run: its side, its horizon, and what its
// operation counted.
type matrixCell struct {
	*testing.B
	api matrixAPI
	d   time.Duration
	// fires counts the iterations that did not do what the operation's name
	// says because a timer fired (or, for resetearlier, may not have: see
	// walk); unsure the resetearlier iterations that may have moved the
	// deadline later.
	fires, unsure int
}

func (c *matrixCell) check() {
	if c.fires > 0 {
		c.ReportMetric(float64(c.fires)/float64(c.N), "fires/op")
	}
	if c.unsure > 0 {
		c.ReportMetric(float64(c.unsure)/float64(c.N), "unsure/op")
	}
	// One fire is allowed even in a short run: the first runs of a cell
	// (b.N = 1, 100, …) are as exposed to one stall as the last.
	if c.fires > max(1, c.N/1000) {
		c.Fatalf("%d fires in %d iterations: the cell did not measure the operation it names", c.fires, c.N)
	}
}

// matrixOps are the operations. Each iteration of each is one use of the
// API as a program makes it, and checks its result.
var matrixOps = []struct {
	name string
	run  func(c *matrixCell)
}{
	{"afterfuncstop", func(c *matrixCell) {
		for range c.N {
			if !c.api.afterFunc(c.d, matrixFire).Stop() {
				c.fires++
			}
		}
	}},
	{"newtimerstop", func(c *matrixCell) {
		// Stop returns true for a fired channel timer whose value was not
		// received, so only the wheel's Stats.Fired sees a fire here.
		for range c.N {
			if !c.api.newTimer(c.d).Stop() {
				c.fires++
			}
		}
	}},
	{"resetlater", func(c *matrixCell) { c.walk(+1) }},
	{"resetearlier", func(c *matrixCell) { c.walk(-1) }},
	// The contexts are used as a request handler uses one: Done is called
	// (to select on), then cancel once the work is done before the
	// deadline. A context whose Done is never called is cheaper on both
	// sides (its channel is never made), so it would not be the common use.
	{"ctxbackground", func(c *matrixCell) { c.withTimeout(context.Background()) }},
	{"ctxcancelparent", func(c *matrixCell) {
		parent, cancel := context.WithCancel(context.Background())
		defer cancel()
		c.withTimeout(parent)
	}},
	{"newtickerstop", func(c *matrixCell) {
		for range c.N {
			c.api.newTicker(c.d).Stop()
		}
	}},
}

func (c *matrixCell) withTimeout(parent context.Context) {
	for range c.N {
		ctx, cancel := c.api.withTimeout(parent, c.d)
		done := ctx.Done()
		cancel()
		select {
		case <-done:
		default:
			c.Fatal("Done is not closed after cancel")
		}
		if !errors.Is(ctx.Err(), context.Canceled) {
			c.fires++ // the deadline came first
		}
	}
}

// walk measures Reset moving one pending AfterFunc timer's deadline later
// (dir +1) or earlier (dir -1) on every iteration. The deadlines walk in
// steps of step from d up to 2d (later) or from 2d down to d (earlier), so
// the timer stays between one and two horizons away:
//
//	later:   Reset(d + j·step), j = 1, …, k-1: now+d+j·step is later than
//	         the previous now'+d+(j-1)·step, since now ≥ now'
//	earlier: Reset(2d − j·step): earlier than the previous deadline as long
//	         as less than step passed since the previous Reset
//
// Every k-th iteration (j = 0) restarts the walk: Stop, then Reset to the
// walk's start on the stopped timer, 1/k of the iterations (1% at 1 ms,
// 0.1% otherwise). step is d/1000, but at least 10 µs (k = d/step), which
// only a stall of the goroutine outlasts; earlier checks the clock every 64
// iterations and counts the iterations of a span that took step or more as
// unsure (unsure/op): they may have moved the deadline later.
func (c *matrixCell) walk(dir int) {
	const minStep = 10 * time.Microsecond
	step := max(c.d/1000, minStep)
	k := int(c.d / step)
	start, delta := c.d, step
	if dir < 0 {
		start, delta = 2*c.d, -step
	}
	c.StopTimer()
	// Armed well past 2d, so that it cannot fire before the first
	// iteration stops it: arming or starting the benchmark's clock may take
	// a millisecond.
	t := c.api.afterFunc(4*time.Hour, matrixFire)
	fires0 := matrixFires.Load()
	last := time.Now()
	c.StartTimer()
	j := 0
	for i := range c.N {
		if j == 0 {
			if !t.Stop() {
				c.fires++
			}
			if t.Reset(start) {
				c.Fatal("Reset of a stopped timer returned true")
			}
		} else if !t.Reset(start + time.Duration(j)*delta) {
			c.fires++
		}
		if j++; j == k {
			j = 0
		}
		if dir < 0 && i&63 == 63 {
			now := time.Now()
			if now.Sub(last) >= step {
				c.unsure += 64
			}
			last = now
		}
	}
	c.StopTimer()
	t.Stop()
	// A fire makes the next Reset (or Stop) return false, so it is counted
	// already; but one in the last iteration only shows in the callbacks.
	c.fires = max(c.fires, int(matrixFires.Load()-fires0))
}
