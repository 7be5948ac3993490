// Command firecost measures what a timer that fires costs a lightly loaded
// process, and what the timers it stops cost beside it: the whole process's
// CPU time per fired timer and per operation, the wheel's against the
// runtime's, each library in a process of its own.
//
// The load is a server's at rest: -stops timers a second armed at -deadline
// and stopped -stop later (a request that finishes in time), and -fires
// timers a second armed the same way and left to fire (a request that times
// out). One goroutine drives it on a -loop period (1 ms), arming the timers due by
// then at an even rate, every (stops+fires)/fires-th of them left to fire,
// and stopping those armed -stop ago; so that the wheel's timers spread
// over its buckets as a server's do. "none" runs the same loop with no
// timer, the cost of the load itself: subtracted from the others, it leaves
// the timers' share.
//
// Each process warms up for -deadline + -stop + 1 s, so that the timers
// that fire in the window were armed under the same load, then measures its
// own CPU (user+sys, getrusage) and its counts over -duration, and prints
// one JSON line (results.FireCost). It fails if a Stop made before the
// deadline returns false or if a timer fires early; it counts the loops that
// ran late by more than a period and the Stops that came after the deadline
// (a process stalled on a busy machine), which the report shows beside the
// figures they blur.
//
// The default role, run, is the driver: for each round, each -deadline,
// it runs one process per library, one after another, in an order that
// turns by one library each round, so that a change in the machine's load
// over the run falls on every library alike.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/internal/lib"
	"github.com/go-timingwheel/timingwheel/bench/internal/measure"
	"github.com/go-timingwheel/timingwheel/bench/internal/results"
)

type config struct {
	role      string
	libs      []string
	deadlines []time.Duration
	rounds    int

	lib      string
	tick     time.Duration
	deadline time.Duration
	stop     time.Duration
	fires    float64
	stops    float64
	loop     time.Duration
	duration time.Duration
}

func main() {
	var c config
	var libs, deadlines string
	flag.StringVar(&c.role, "role", "run", "run (start one process per library, print results) or load")
	flag.StringVar(&libs, "libs", "wheel,runtime,none", "libraries, each in its own process (run)")
	// 50 ms and 200 ms land on the first level of a 1 ms × 512 wheel, one
	// bucket per tick; 1 s and 10 s on the second.
	flag.StringVar(&deadlines, "deadline", "50ms,200ms,1s,10s", "timers' deadline: a list for run, one value for load")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds (run)")
	flag.StringVar(&c.lib, "lib", "wheel", "wheel, runtime or none (load)")
	flag.DurationVar(&c.tick, "tick", time.Millisecond, "the wheel's tick")
	flag.DurationVar(&c.stop, "stop", 10*time.Millisecond, "time from arming a timer to stopping it")
	// Issue 17's light load: 30 timeouts and 3,000 finished requests a second.
	flag.Float64Var(&c.fires, "fires", 30, "timers left to fire per second")
	flag.Float64Var(&c.stops, "stops", 3000, "timers stopped per second")
	// 1 ms spreads the timers over the wheel's first-level buckets as a
	// server's requests do; a longer period suits a load with few timers
	// (-stops 0 -loop 33ms: each fire alone, the wheel's poller woken for it).
	flag.DurationVar(&c.loop, "loop", time.Millisecond, "the load's period, at most -stop")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "the measured window")
	flag.Parse()

	var err error
	c.libs = strings.Split(libs, ",")
	for _, s := range strings.Split(deadlines, ",") {
		d, perr := time.ParseDuration(strings.TrimSpace(s))
		if perr != nil || d <= c.stop {
			err = fmt.Errorf("-deadline %q: want durations longer than -stop (%v)", s, c.stop)
			break
		}
		c.deadlines = append(c.deadlines, d)
	}
	if err == nil && (c.fires <= 0 || c.stops < 0 || c.loop <= 0 || (c.stops > 0 && c.loop > c.stop)) {
		err = fmt.Errorf("-fires must be positive, -stops not negative, -loop positive and, with stops, at most -stop")
	}
	if err == nil {
		switch c.role {
		case "run":
			err = drive(c)
		case "load":
			if len(c.deadlines) != 1 {
				err = fmt.Errorf("load takes one -deadline, not %v", c.deadlines)
			} else {
				c.deadline = c.deadlines[0]
				err = load(c)
			}
		default:
			err = fmt.Errorf("unknown -role %q", c.role)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "firecost %s: %v\n", c.role, err)
		os.Exit(1)
	}
}

// drive runs the processes one at a time and prints their lines, each with
// its round.
func drive(c config) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	for round := 1; round <= c.rounds; round++ {
		k := (round - 1) % len(c.libs)
		order := append(slices.Clone(c.libs[k:]), c.libs[:k]...)
		for _, d := range c.deadlines {
			for _, l := range order {
				cmd := exec.CommandContext(ctx, self, "-role", "load", "-lib", l, "-deadline", d.String(),
					"-tick", c.tick.String(), "-stop", c.stop.String(), "-fires", fmt.Sprint(c.fires),
					"-stops", fmt.Sprint(c.stops), "-loop", c.loop.String(), "-duration", c.duration.String())
				cmd.Stderr = os.Stderr
				out, err := cmd.Output() // waits: the child is reaped, or killed with ctx
				if err != nil {
					return fmt.Errorf("round %d, %s, deadline %v: %w", round, l, d, err)
				}
				var res results.FireCost
				sc := bufio.NewScanner(strings.NewReader(string(out)))
				for sc.Scan() {
					if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
						return fmt.Errorf("round %d, %s: %w", round, l, err)
					}
				}
				res.Round = round
				if err := measure.Emit(os.Stdout, res); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// armed is a timer to stop once its time comes.
type armed struct {
	h  lib.Handle
	at time.Time
}

// load runs the load in this process and prints its results.FireCost.
func load(c config) error {
	var timers lib.Lib
	if c.lib != "none" {
		var err error
		if timers, err = lib.New(lib.Config{Name: c.lib, Tick: c.tick, Size: 512}); err != nil {
			return err
		}
		defer timers.Close()
	}
	var fires, early atomic.Int64
	fire := func(at time.Time) func() {
		return func() {
			if time.Since(at) < c.deadline {
				early.Add(1)
			}
			fires.Add(1)
		}
	}
	rate := c.fires + c.stops                // arms per second
	every := max(1, int64(rate/c.fires+0.5)) // every every-th timer fires
	loop := c.loop
	warmup := c.deadline + c.stop + time.Second // fires in the window come from arms under load
	var pending []armed                         // oldest first
	var nArmed, nStops, nMissed, failedStops, lateStops int64
	start := time.Now()
	window, end := start.Add(warmup), start.Add(warmup+c.duration)

	type snap struct {
		cpu                 time.Duration
		switches            uint64
		armed, stops, fires int64
		wakeups, wheelFired int64
	}
	take := func() snap {
		s := snap{cpu: measure.CPU(), switches: measure.ReadSched().CtxSwitches, armed: nArmed, stops: nStops, fires: fires.Load(), wakeups: -1, wheelFired: -1}
		if w, ok := timers.(*lib.Wheel); ok {
			st := w.TW.Stats()
			s.wakeups, s.wheelFired = int64(st.Wakeups), int64(st.Fired)
		}
		return s
	}
	var begin snap
	measuring := false
	for now := start; now.Before(end); now = time.Now() {
		if !measuring && !now.Before(window) {
			begin, measuring = take(), true
		}
		// Arm the timers due by now at an even rate.
		due := int64(now.Sub(start).Seconds() * rate)
		if due-nArmed > int64(rate*float64(2*loop)/float64(time.Second))+1 && measuring {
			nMissed++ // the loop ran late by more than one period
		}
		for ; nArmed < due; nArmed++ {
			// Read before arming, so that a timer fires at or after at+deadline.
			at := time.Now()
			var h lib.Handle
			if timers != nil {
				h = timers.AfterFunc(c.deadline, fire(at))
			}
			if nArmed%every != 0 {
				pending = append(pending, armed{h: h, at: at})
			}
		}
		// Stop the timers armed -stop ago.
		i := 0
		for ; i < len(pending) && now.Sub(pending[i].at) >= c.stop; i++ {
			if h := pending[i].h; h != nil && !h.Stop() {
				// Only a loop held up past the deadline (a stalled
				// process on a busy machine) may find a timer fired.
				if time.Since(pending[i].at) < c.deadline {
					failedStops++
				} else {
					lateStops++
				}
			}
			nStops++
		}
		pending = slices.Delete(pending, 0, i)
		time.Sleep(loop)
	}
	e := take()
	if failedStops > 0 {
		return fmt.Errorf("%d Stops before the deadline (%v) returned false", failedStops, c.deadline)
	}
	if early.Load() > 0 {
		return fmt.Errorf("%d timers fired early", early.Load())
	}
	res := results.FireCost{
		Workload: "firecost", Lib: c.lib, GOMAXPROCS: runtime.GOMAXPROCS(0),
		DeadlineMs: measure.Ms(c.deadline), StopMs: measure.Ms(c.stop), FiresPerS: c.fires, StopsPerS: c.stops, LoopMs: measure.Ms(loop),
		WarmupS: warmup.Seconds(), DurationS: c.duration.Seconds(),
		CPUS: (e.cpu - begin.cpu).Seconds(), CtxSwitches: int64(e.switches - begin.switches), Armed: e.armed - begin.armed, Stops: e.stops - begin.stops,
		Fires: e.fires - begin.fires, Early: early.Load(), Missed: nMissed, LateStops: lateStops, Wakeups: -1, Fired: -1,
	}
	if c.lib == "wheel" {
		res.TickMs = measure.Ms(c.tick)
		res.Wakeups, res.Fired = e.wakeups-begin.wakeups, e.wheelFired-begin.wheelFired
	}
	return measure.Emit(os.Stdout, res)
}
