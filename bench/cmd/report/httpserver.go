package main

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// httpLibs are the servers of bench/cmd/httpserver, in table order.
var httpLibs = []string{"wheel", "runtime", "none"}

// httpPoint is a point of the sweep: a request deadline and a connection count.
type httpPoint struct {
	deadlineMs float64
	conns      int
}

// httpRow is one library at one point of the sweep, over every round.
type httpRow struct {
	httpPoint
	lib      string
	rounds   int
	cpu      float64 // median CPU seconds
	cpuRatio float64 // median over rounds of CPU ÷ the runtime server's in the same round
	rss      float64 // median peak RSS, MiB
	rssRatio float64
	// switchRatio is the median over rounds of the process's context
	// switches per request ÷ the runtime server's in the same round; NaN
	// where not counted (runs before the count existed).
	switchRatio float64
	requests    float64 // median
	wakeups     float64 // median; NaN where not counted
	// wakeupsPerFire is the median over rounds of the wheel's poller
	// wake-ups per timer it fired; NaN where not counted or nothing fired.
	wakeupsPerFire float64
	p99            float64 // median client p99 latency, ms
	deadlines      int64   // deadline fires, summed over rounds
	idles          int64   // idle fires, summed over rounds
	early          int64   // early deadline and idle fires, summed over rounds
	unclosed       int64   // idle connections left open, summed over rounds
	lost           int64   // busy connections the client lost, summed over rounds
}

// httpRows aggregates the runs. The servers of one round ran at the same
// time, so the ratios are taken within each round and then their median.
func httpRows(runs []httpServer) []httpRow {
	at := func(x httpServer) httpPoint { return httpPoint{x.DeadlineMs, x.Conns} }
	var points []httpPoint
	for _, x := range runs {
		if !slices.Contains(points, at(x)) {
			points = append(points, at(x))
		}
	}
	slices.SortFunc(points, func(a, b httpPoint) int {
		if a.deadlineMs != b.deadlineMs {
			return cmp.Compare(a.deadlineMs, b.deadlineMs)
		}
		return cmp.Compare(a.conns, b.conns)
	})
	find := func(pt httpPoint, round int, lib string) (httpServer, bool) {
		for _, x := range runs {
			if at(x) == pt && x.Round == round && x.Lib == lib {
				return x, true
			}
		}
		return httpServer{}, false
	}
	var rows []httpRow
	for _, pt := range points {
		for _, lib := range httpLibs {
			row := httpRow{httpPoint: pt, lib: lib}
			var cpu, cpuR, rss, rssR, swR, req, wk, wkF, p99 []float64
			for _, x := range runs {
				if at(x) != pt || x.Lib != lib {
					continue
				}
				row.rounds++
				cpu, rss, req = append(cpu, x.CPUS), append(rss, x.MaxRSSMiB), append(req, float64(x.Requests))
				p99 = append(p99, x.Latency.P99)
				if x.Wakeups >= 0 {
					wk = append(wk, float64(x.Wakeups))
					if x.Fired > 0 {
						wkF = append(wkF, float64(x.Wakeups)/float64(x.Fired))
					}
				}
				if rt, ok := find(pt, x.Round, "runtime"); ok {
					cpuR, rssR = append(cpuR, x.CPUS/rt.CPUS), append(rssR, x.MaxRSSMiB/rt.MaxRSSMiB)
					if r, ok := perUnitRatio(x.CtxSwitches, x.Requests, rt.CtxSwitches, rt.Requests); ok {
						swR = append(swR, r)
					}
				}
				row.deadlines += x.DeadlineFires
				row.idles += x.IdleFires
				row.early += x.DeadlineEarly + x.IdleEarly
				row.unclosed += x.IdleUnclosed
				row.lost += x.Redials
			}
			if row.rounds == 0 {
				continue
			}
			row.cpu, row.cpuRatio, row.rss, row.rssRatio = medianOf(cpu), medianOf(cpuR), medianOf(rss), medianOf(rssR)
			row.switchRatio = medianOf(swR)
			row.requests, row.wakeups, row.wakeupsPerFire, row.p99 = medianOf(req), medianOf(wk), medianOf(wkF), medianOf(p99)
			rows = append(rows, row)
		}
	}
	return rows
}

// perUnitRatio is (n per unit) ÷ (rtN per rtUnit), and false where either
// count is zero (runs from before it was counted) or has no units.
func perUnitRatio(n, units, rtN, rtUnits int64) (float64, bool) {
	if n <= 0 || rtN <= 0 || units <= 0 || rtUnits <= 0 {
		return 0, false
	}
	return (float64(n) / float64(units)) / (float64(rtN) / float64(rtUnits)), true
}

// times prints a ratio, or "—" for NaN.
func times(v float64) string {
	if math.IsNaN(v) {
		return "—"
	}
	return fmt.Sprintf("%.2f×", v)
}

// medianOf v, or NaN if v is empty.
func medianOf(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	v = slices.Clone(v)
	slices.Sort(v)
	if len(v)%2 == 1 {
		return v[len(v)/2]
	}
	return (v[len(v)/2-1] + v[len(v)/2]) / 2
}

func (r *report) httpServerSection(b *md) {
	b.p("## 9. Real net/http server")
	b.p("")
	if len(r.httpServer) > 0 {
		x := r.httpServer[0]
		b.p("A net/http server on loopback, as a Go server uses timers: an idle timeout of %g ms per", x.IdleMs)
		b.p("connection, Reset on every read, and a per-request deadline from a middleware whose context a")
		b.p("timer cancels, stopped when the handler returns; the sweep runs every request deadline at every")
		b.p("connection count, the whole sweep once per round. timingwheel arms both on a")
		b.p("`timingwheel.New(%g ms, 512)` wheel (AfterFunc; context.WithCancel cancelled by a wheel timer); the", x.TickMs)
		b.p("runtime uses time.AfterFunc and context.WithTimeout; \"none\" is the same server with no timer at all.")
		b.p("At each point the three servers run at the same time as separate processes, each loaded by its own client")
		b.p("process, so they share the machine's load: a client holds the connections open and sends a GET on")
		b.p("each every %g ms. CPU (user+sys, getrusage) and requests are the server process's over %g s after", x.IntervalMs, x.DurationS)
		b.p("%g s of warm-up; peak RSS is its ru_maxrss. Ratios are taken within each round, then their median.", x.WarmupS)
		b.p("")
		b.p("Never-early checks, over the whole run: %g%% of requests wait for their %g ms deadline, and the", 100*x.SlowFrac, x.SlowDeadlineMs)
		b.p("server counts those its handler saw cancelled before the deadline had elapsed; %g%% of connections", 100*x.IdleFrac)
		b.p("fall silent once, and the idle timer's callback checks that the timeout had elapsed since the read")
		b.p("that last reset it. \"none\" has no timer: it answers at once, and its client closes the silent")
		b.p("connections itself.")
	}
	b.p("")
	b.p("![server CPU, wheel ÷ runtime, against connections, one line per request deadline](httpserver_cpu.png)")
	b.p("")
	b.table([]string{"deadline ms", "connections", "rounds", "CPU s wheel", "runtime", "none", "wheel ÷ runtime",
		"context switches per request, wheel ÷ runtime",
		"peak RSS MiB wheel", "runtime", "wheel ÷ runtime", "requests wheel", "runtime", "none",
		"wheel wake-ups", "… per fired timer", "deadline fires", "idle fires", "early fires", "client p99 ms wheel", "runtime"},
		httpTable(httpRows(r.httpServer)))
	b.p("CPU s, RSS, requests, wake-ups (the wheel's poller, Stats.Wakeups), wake-ups per fired timer")
	b.p("(Stats.Wakeups ÷ Stats.Fired, each round's, deadline and idle fires together) and client p99 latency")
	b.p("are medians over rounds; fires are summed over rounds, the wheel's and the runtime's servers'")
	b.p("together (early fires in bold). Context switches (getrusage, voluntary and not) count how often the")
	b.p("server's threads slept and were woken, per request served; where a server uses a few hundredths of a")
	b.p("second in the window (30 connections) its CPU ratio spreads ±30%% from round to round, and this count")
	b.p("is the steadier measure of what its timers made the scheduler do. To reproduce, from `bench/`:")
	b.p("")
	b.p("```sh")
	for _, c := range r.env.commands {
		if strings.Contains(c, "./cmd/httpserver") {
			b.p("%s", c)
		}
	}
	b.p("```")
	b.p("")
}

// httpTable is one row per point of the sweep, the three servers side by side.
func httpTable(rows []httpRow) [][]string {
	var out [][]string
	for i := 0; i < len(rows); {
		pt := rows[i].httpPoint
		by := map[string]httpRow{}
		for ; i < len(rows) && rows[i].httpPoint == pt; i++ {
			by[rows[i].lib] = rows[i]
		}
		w, rt, none := by["wheel"], by["runtime"], by["none"]
		if _, ok := by["wheel"]; !ok {
			nan := math.NaN()
			w.cpuRatio, w.rssRatio, w.switchRatio, w.wakeups, w.wakeupsPerFire = nan, nan, nan, nan, nan
		}
		cell := func(lib string, f func(httpRow) string) string {
			if row, ok := by[lib]; ok {
				return f(row)
			}
			return "—"
		}
		cpu := func(x httpRow) string { return num(x.cpu) }
		rss := func(x httpRow) string { return num(x.rss) }
		req := func(x httpRow) string { return fmt.Sprintf("%.0f", x.requests) }
		p99 := func(x httpRow) string { return num(x.p99) }
		wk, wkF := "—", "—"
		if !math.IsNaN(w.wakeups) {
			wk = fmt.Sprintf("%.0f", w.wakeups)
		}
		if !math.IsNaN(w.wakeupsPerFire) {
			wkF = num(w.wakeupsPerFire)
		}
		early := fmt.Sprint(w.early + rt.early)
		if w.early+rt.early > 0 {
			early = fmt.Sprintf("**%d** (wheel %d)", w.early+rt.early, w.early)
		}
		idles := fmt.Sprint(w.idles + rt.idles)
		if n := w.unclosed + rt.unclosed; n > 0 {
			idles += fmt.Sprintf(" (**%d left open**)", n)
		}
		if n := w.lost + rt.lost; n > 0 {
			// A client that falls behind by the idle timeout has its
			// connection closed; not early, but not an idle connection.
			idles += fmt.Sprintf(" (%d on busy connections)", n)
		}
		out = append(out, []string{fmt.Sprintf("%g", pt.deadlineMs), fmt.Sprint(pt.conns), fmt.Sprint(max(w.rounds, rt.rounds, none.rounds)),
			cell("wheel", cpu), cell("runtime", cpu), cell("none", cpu), times(w.cpuRatio), times(w.switchRatio),
			cell("wheel", rss), cell("runtime", rss), times(w.rssRatio),
			cell("wheel", req), cell("runtime", req), cell("none", req),
			wk, wkF, fmt.Sprint(w.deadlines + rt.deadlines), idles, early, cell("wheel", p99), cell("runtime", p99)})
	}
	return out
}
