package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// fireCostLibs are the processes of bench/cmd/firecost, in table order.
var fireCostLibs = []string{"wheel", "runtime", "none"}

// fireCostPoint is one load of bench/cmd/firecost.
type fireCostPoint struct {
	deadlineMs, firesPerS, stopsPerS, loopMs float64
}

// fireCostRow is one library at one load, over every round.
type fireCostRow struct {
	fireCostPoint
	lib    string
	rounds int
	cpu    float64 // median CPU seconds over the window
	// perFire is the median whole-process CPU per fired timer, µs; share
	// the same less the no-timer process's CPU in the same round; perOp the
	// whole-process CPU per AfterFunc or Stop call, ns. NaN where undefined.
	perFire, share, perOp float64
	// ratio is the median over rounds of perFire ÷ the runtime's;
	// switchRatio the same of the context switches per fired timer, NaN
	// where not counted.
	ratio, switchRatio float64
	// cpuRatio is the median over rounds of the process's CPU ÷ the
	// runtime's process's in the same round: the measure where few or no
	// timers fire (the stop probe).
	cpuRatio                float64
	fires, stops            float64 // medians
	wakeups, wakeupsPerFire float64 // the wheel's, medians; NaN for the others
	early, missed, late     int64   // summed over rounds
}

func fireCostRows(runs []fireCost) []fireCostRow {
	at := func(x fireCost) fireCostPoint { return fireCostPoint{x.DeadlineMs, x.FiresPerS, x.StopsPerS, x.LoopMs} }
	var points []fireCostPoint
	for _, x := range runs {
		if !slices.Contains(points, at(x)) {
			points = append(points, at(x))
		}
	}
	slices.SortFunc(points, func(a, b fireCostPoint) int {
		return cmp.Or(cmp.Compare(b.stopsPerS, a.stopsPerS), cmp.Compare(a.firesPerS, b.firesPerS),
			cmp.Compare(a.loopMs, b.loopMs), cmp.Compare(a.deadlineMs, b.deadlineMs))
	})
	find := func(pt fireCostPoint, round int, lib string) (fireCost, bool) {
		for _, x := range runs {
			if at(x) == pt && x.Round == round && x.Lib == lib {
				return x, true
			}
		}
		return fireCost{}, false
	}
	var rows []fireCostRow
	for _, pt := range points {
		for _, lib := range fireCostLibs {
			row := fireCostRow{fireCostPoint: pt, lib: lib}
			var cpu, perFire, share, perOp, ratio, swR, cpuR, fires, stops, wk, wkF []float64
			for _, x := range runs {
				if at(x) != pt || x.Lib != lib {
					continue
				}
				row.rounds++
				cpu, fires, stops = append(cpu, x.CPUS), append(fires, float64(x.Fires)), append(stops, float64(x.Stops))
				if rt, ok := find(pt, x.Round, "runtime"); ok && rt.CPUS > 0 {
					cpuR = append(cpuR, x.CPUS/rt.CPUS)
				}
				if ops := x.Armed + x.Stops; ops > 0 && lib != "none" {
					perOp = append(perOp, 1e9*x.CPUS/float64(ops))
				}
				if x.Fires > 0 {
					perFire = append(perFire, 1e6*x.CPUS/float64(x.Fires))
					if none, ok := find(pt, x.Round, "none"); ok {
						share = append(share, 1e6*(x.CPUS-none.CPUS)/float64(x.Fires))
					}
					if rt, ok := find(pt, x.Round, "runtime"); ok && rt.Fires > 0 {
						ratio = append(ratio, (x.CPUS/float64(x.Fires))/(rt.CPUS/float64(rt.Fires)))
						if r, ok := perUnitRatio(x.CtxSwitches, x.Fires, rt.CtxSwitches, rt.Fires); ok {
							swR = append(swR, r)
						}
					}
				}
				if x.Wakeups >= 0 {
					wk = append(wk, float64(x.Wakeups))
					if x.Fired > 0 {
						wkF = append(wkF, float64(x.Wakeups)/float64(x.Fired))
					}
				}
				row.early += x.Early
				row.missed += x.Missed
				row.late += x.LateStops
			}
			if row.rounds == 0 {
				continue
			}
			row.cpu, row.perFire, row.share, row.perOp = medianOf(cpu), medianOf(perFire), medianOf(share), medianOf(perOp)
			row.ratio, row.fires, row.stops = medianOf(ratio), medianOf(fires), medianOf(stops)
			row.switchRatio, row.cpuRatio = medianOf(swR), medianOf(cpuR)
			row.wakeups, row.wakeupsPerFire = medianOf(wk), medianOf(wkF)
			rows = append(rows, row)
		}
	}
	return rows
}

func (r *report) fireCostSection(b *md) {
	if len(r.fireCost) == 0 {
		return
	}
	x := r.fireCost[0]
	b.p("## 9a. A timer that fires, at light load")
	b.p("")
	b.p("A server at rest, in one process per library: one goroutine on a loop of the period the table gives")
	b.p("arms timers at an even rate and stops each %g ms after arming, but for a few, left to fire: e.g.", x.StopMs)
	b.p("3000 stops and 30 fires a second, one timer in 101 left to fire. The wheel is")
	tick := 0.0
	for _, w := range r.fireCost {
		if w.Lib == "wheel" {
			tick = w.TickMs
		}
	}
	b.p("`timingwheel.New(%g ms, 512)`; the runtime's timers are", tick)
	b.p("time.AfterFunc; \"none\" is the same loop with no timer. CPU is the whole process's (user+sys,")
	b.p("getrusage) over %g s after a warm-up of the deadline plus %g s, so that the timers firing in the", x.DurationS, math.Round(1000*x.WarmupS-x.DeadlineMs-x.StopMs)/1000)
	b.p("window were armed under the same load. The processes run one at a time, every library once per")
	b.p("deadline in each round, in an order that turns each round. A Stop made before the deadline that")
	b.p("returns false, or a timer that fires early, fails the run.")
	b.p("")
	var rows [][]string
	for _, x := range fireCostRows(r.fireCost) {
		name := title(x.lib)
		if x.lib == "none" {
			name = "none (the loop alone)"
		}
		f := func(v float64, format string) string {
			if math.IsNaN(v) {
				return "—"
			}
			return fmt.Sprintf(format, v)
		}
		early := fmt.Sprint(x.early)
		if x.early > 0 {
			early = fmt.Sprintf("**%d**", x.early)
		}
		rows = append(rows, []string{fmt.Sprintf("%g / %g / %g", x.firesPerS, x.stopsPerS, x.loopMs), fmt.Sprintf("%g", x.deadlineMs), name, fmt.Sprint(x.rounds), num(x.cpu),
			times(x.cpuRatio), f(x.perFire, "%.0f"), f(x.share, "%.0f"), times(x.ratio), times(x.switchRatio), f(x.perOp, "%.0f"),
			fmt.Sprintf("%.0f", x.fires), fmt.Sprintf("%.0f", x.stops), f(x.wakeups, "%.0f"), f(x.wakeupsPerFire, "%.2f"),
			early, fmt.Sprintf("%d / %d", x.missed, x.late)})
	}
	b.table([]string{"fires/s / stops/s / loop ms", "deadline ms", "library", "rounds", "CPU s", "CPU ÷ runtime", "CPU per fired timer µs", "… less the loop's µs",
		"per fired timer ÷ runtime", "context switches per fired timer ÷ runtime", "CPU per AfterFunc or Stop ns", "fires", "stops", "wheel wake-ups",
		"… per fired timer", "early fires", "late loops / late stops"}, rows)
	b.p("The rows with almost no fires (0.0001 a second) are the stop probe: every timer armed is stopped")
	b.p("10 ms later, so what they measure is the cost of timers that never fire, CPU ÷ the runtime's.")
	b.p("Medians over rounds; \"less the loop's\" subtracts the no-timer process's CPU in the same round")
	b.p("before dividing; context switches are the process's (getrusage, voluntary and not: how often its")
	b.p("threads slept and were woken); wake-ups are the wheel's poller's (Stats.Wakeups, per Stats.Fired). Late loops")
	b.p("ran more than a period behind in the window, late stops came after the deadline (a stalled")
	b.p("process): both are the machine's noise, summed over rounds. To reproduce, from `bench/`:")
	b.p("")
	b.p("```sh")
	for _, c := range r.env.commands {
		if strings.Contains(c, "./cmd/firecost") {
			b.p("%s", c)
		}
	}
	b.p("```")
	b.p("")
}
