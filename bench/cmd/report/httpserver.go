package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// httpLibs are the servers of bench/cmd/httpserver, in table order.
var httpLibs = []string{"wheel", "runtime", "none"}

// httpRow is one library at one connection count, over every round.
type httpRow struct {
	conns     int
	lib       string
	rounds    int
	cpu       float64 // median CPU seconds
	cpuRatio  float64 // median over rounds of CPU ÷ the runtime server's in the same round
	rss       float64 // median peak RSS, MiB
	rssRatio  float64
	requests  float64 // median
	wakeups   float64 // median; NaN where not counted
	p99       float64 // median client p99 latency, ms
	deadlines int64   // deadline fires, summed over rounds
	idles     int64   // idle fires, summed over rounds
	early     int64   // early deadline and idle fires, summed over rounds
	unclosed  int64   // idle connections left open, summed over rounds
	lost      int64   // busy connections the client lost, summed over rounds
}

// httpRows aggregates the runs. The servers of one round ran at the same
// time, so the ratios are taken within each round and then their median.
func httpRows(runs []httpServer) []httpRow {
	var conns []int
	for _, x := range runs {
		if !slices.Contains(conns, x.Conns) {
			conns = append(conns, x.Conns)
		}
	}
	slices.Sort(conns)
	find := func(conns, round int, lib string) (httpServer, bool) {
		for _, x := range runs {
			if x.Conns == conns && x.Round == round && x.Lib == lib {
				return x, true
			}
		}
		return httpServer{}, false
	}
	var rows []httpRow
	for _, n := range conns {
		for _, lib := range httpLibs {
			row := httpRow{conns: n, lib: lib}
			var cpu, cpuR, rss, rssR, req, wk, p99 []float64
			for _, x := range runs {
				if x.Conns != n || x.Lib != lib {
					continue
				}
				row.rounds++
				cpu, rss, req = append(cpu, x.CPUS), append(rss, x.MaxRSSMiB), append(req, float64(x.Requests))
				p99 = append(p99, x.Latency.P99)
				if x.Wakeups >= 0 {
					wk = append(wk, float64(x.Wakeups))
				}
				if rt, ok := find(n, x.Round, "runtime"); ok {
					cpuR, rssR = append(cpuR, x.CPUS/rt.CPUS), append(rssR, x.MaxRSSMiB/rt.MaxRSSMiB)
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
			row.requests, row.wakeups, row.p99 = medianOf(req), medianOf(wk), medianOf(p99)
			rows = append(rows, row)
		}
	}
	return rows
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
		b.p("connection, Reset on every read, and a per-request deadline (%g ms) from a middleware whose", x.DeadlineMs)
		b.p("context a timer cancels, stopped when the handler returns. timingwheel arms both on a")
		b.p("`timingwheel.New(%g ms, 512)` wheel (AfterFunc; context.WithCancel cancelled by a wheel timer); the", x.TickMs)
		b.p("runtime uses time.AfterFunc and context.WithTimeout; \"none\" is the same server with no timer at all.")
		b.p("The three servers run at the same time as separate processes, each loaded by its own client")
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
	var rows [][]string
	for _, x := range httpRows(r.httpServer) {
		name, wk := title(x.lib), "—"
		if x.lib == "none" {
			name = "none (no timers)"
		}
		if !math.IsNaN(x.wakeups) {
			wk = fmt.Sprintf("%.0f", x.wakeups)
		}
		deadlines, idles, early := fmt.Sprint(x.deadlines), fmt.Sprint(x.idles), fmt.Sprint(x.early)
		if x.lib == "none" {
			deadlines, idles, early = "—", "—", "—"
		} else if x.early > 0 {
			early = fmt.Sprintf("**%d**", x.early)
		}
		if x.unclosed > 0 && x.lib != "none" {
			idles += fmt.Sprintf(" (**%d left open**)", x.unclosed)
		}
		if x.lost > 0 && x.lib != "none" {
			// A client that falls behind by the idle timeout has its
			// connection closed; not early, but not an idle connection.
			idles += fmt.Sprintf(" (%d on busy connections)", x.lost)
		}
		rows = append(rows, []string{fmt.Sprint(x.conns), name, num(x.cpu), times(x.cpuRatio), num(x.rss),
			times(x.rssRatio), fmt.Sprintf("%.0f", x.requests), wk, deadlines, idles, early, num(x.p99)})
	}
	b.table([]string{"connections", "library", "CPU s", "÷ runtime", "peak RSS MiB", "÷ runtime", "requests",
		"wake-ups", "deadline fires", "idle fires", "early fires", "client p99 ms"}, rows)
	b.p("CPU s, RSS, requests, wake-ups (the wheel's poller) and client p99 latency are medians over rounds;")
	b.p("fires are summed over rounds. To reproduce, from `bench/`:")
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
