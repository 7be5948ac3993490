package main

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadBenchMedians(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.txt")
	raw := `goos: linux
BenchmarkReset/lib=wheel/N=1M-2   1000   40.0 ns/op   0 B/op   0 allocs/op
BenchmarkReset/lib=wheel/N=1M-2   1000   60.0 ns/op   0 B/op   0 allocs/op
BenchmarkReset/lib=wheel/N=1M-2   1000   50.0 ns/op   0 B/op   0 allocs/op
BenchmarkHeap/lib=runtime/N=1M-2  1  5.0 ns/op  112.0 B/timer  -0.5 live-after-stop-B/timer
PASS
`
	if err := os.WriteFile(path, []byte(raw), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := readBench(path)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := s.median(key("Reset", "wheel", "1M"), "ns/op"); got != 50 {
		t.Errorf("median ns/op = %v, want 50", got)
	}
	if lo, hi, n := s.spread(key("Reset", "wheel", "1M"), "ns/op"); lo != 40 || hi != 60 || n != 3 {
		t.Errorf("spread = %v %v %v", lo, hi, n)
	}
	if got, _ := s.median(key("Heap", "runtime", "1M"), "live-after-stop-B/timer"); got != -0.5 {
		t.Errorf("custom metric = %v, want -0.5", got)
	}
	if _, ok := s.median(key("Reset", "gozero", "1M"), "ns/op"); ok {
		t.Error("a missing result has a median")
	}
}

func TestRatioAndNum(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{0, "0"}, {1234.4, "1234"}, {12.34, "12.3"}, {1.234, "1.23"}, {0.01234, "0.0123"}} {
		if got := num(c.v); got != c.want {
			t.Errorf("num(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	if got := ratio(1, 4); got != "0.25×" {
		t.Errorf("ratio = %q", got)
	}
	if got := ratio(1, 0); got != "—" {
		t.Errorf("ratio by zero = %q", got)
	}
}

func TestHTTPRowsPairRatiosByRound(t *testing.T) {
	run := func(round, conns int, lib string, cpu, rss float64, early int64) httpServer {
		return httpServer{Round: round, Conns: conns, Lib: lib, CPUS: cpu, MaxRSSMiB: rss, Wakeups: -1,
			DeadlineFires: 10, IdleFires: 3, DeadlineEarly: early}
	}
	rows := httpRows([]httpServer{
		// Round 2 ran on a busier machine: every server used more CPU.
		run(1, 3000, "runtime", 2, 100, 0), run(1, 3000, "wheel", 1.8, 50, 0),
		run(2, 3000, "runtime", 8, 100, 0), run(2, 3000, "wheel", 6, 100, 1),
		run(3, 3000, "runtime", 4, 100, 0), run(3, 3000, "wheel", 1, 100, 0),
		run(1, 300, "wheel", 1, 10, 0), // no runtime server in its round
	})
	if len(rows) != 3 {
		t.Fatalf("got %d rows, want 3 (300 wheel, 3000 wheel, 3000 runtime): %+v", len(rows), rows)
	}
	if r := rows[0]; r.conns != 300 || r.lib != "wheel" || !math.IsNaN(r.cpuRatio) {
		t.Errorf("300 wheel = %+v, want conns first and no ratio without a runtime server", r)
	}
	w := rows[1]
	// Per-round ratios 0.9, 0.75 and 0.25: median 0.75, where the ratio of
	// the medians would be 1.8 ÷ 4 = 0.45.
	if w.lib != "wheel" || w.cpu != 1.8 || w.cpuRatio != 0.75 || w.rssRatio != 1 {
		t.Errorf("3000 wheel = %+v, want cpu 1.8, ratio 0.75, RSS ratio 1", w)
	}
	if w.rounds != 3 || w.deadlines != 30 || w.idles != 9 || w.early != 1 || !math.IsNaN(w.wakeups) {
		t.Errorf("3000 wheel sums = %+v", w)
	}
	if rt := rows[2]; rt.lib != "runtime" || rt.cpuRatio != 1 {
		t.Errorf("3000 runtime = %+v", rt)
	}
}

func TestReadBenchProcsKeepsGOMAXPROCS(t *testing.T) {
	path := filepath.Join(t.TempDir(), "scaling.txt")
	out := "BenchmarkP/impl=wheel \t 100\t 140 ns/op\t 0 collisions/op\n" +
		"BenchmarkP/impl=wheel-4 \t 100\t 80.5 ns/op\t 2e-06 collisions/op\n"
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := readBenchProcs(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.med("P/impl=wheel/procs=1", "ns/op"); got != 140 {
		t.Errorf("GOMAXPROCS 1 (no suffix): got %v ns/op, want 140", got)
	}
	if got := s.med("P/impl=wheel/procs=4", "collisions/op"); got != 2e-06 {
		t.Errorf("GOMAXPROCS 4: got %v collisions/op, want 2e-06", got)
	}
}

func TestHTTPRowsOnePerDeadlineAndConns(t *testing.T) {
	run := func(round int, deadline float64, lib string, cpu float64, wakeups, fired int64) httpServer {
		return httpServer{Round: round, DeadlineMs: deadline, Conns: 300, Lib: lib, CPUS: cpu, MaxRSSMiB: 10,
			Wakeups: wakeups, Fired: fired}
	}
	rows := httpRows([]httpServer{
		run(1, 1000, "wheel", 1, 20, 10), run(1, 1000, "runtime", 1, -1, -1),
		run(1, 200, "wheel", 3, 300, 10), run(1, 200, "runtime", 2, -1, -1),
		run(2, 200, "wheel", 2, 100, 10), run(2, 200, "runtime", 2, -1, -1),
		run(3, 200, "wheel", 2, 50, 0), run(3, 200, "runtime", 1, -1, -1), // nothing fired: no ratio
	})
	if len(rows) != 4 {
		t.Fatalf("got %d rows, want 4 (wheel and runtime at 200 and 1000 ms): %+v", len(rows), rows)
	}
	w200, w1000 := rows[0], rows[2]
	if w200.deadlineMs != 200 || w200.lib != "wheel" || w1000.deadlineMs != 1000 || w1000.lib != "wheel" {
		t.Fatalf("rows out of order (want deadline, then library): %+v", rows)
	}
	// Per-round CPU ratios 1.5, 1 and 2: median 1.5. Wake-ups per fire 30
	// and 10 (round 3 fired nothing): median 20.
	if w200.rounds != 3 || w200.cpuRatio != 1.5 || w200.wakeups != 100 || w200.wakeupsPerFire != 20 {
		t.Errorf("200 ms wheel = %+v, want 3 rounds, CPU ratio 1.5, 100 wake-ups, 20 per fire", w200)
	}
	if w1000.rounds != 1 || w1000.cpuRatio != 1 || w1000.wakeupsPerFire != 2 {
		t.Errorf("1000 ms wheel = %+v, want 1 round, CPU ratio 1, 2 wake-ups per fire", w1000)
	}
	if rt := rows[1]; rt.lib != "runtime" || !math.IsNaN(rt.wakeups) || !math.IsNaN(rt.wakeupsPerFire) {
		t.Errorf("200 ms runtime = %+v, want no wake-ups counted", rt)
	}
	if !math.IsNaN(w200.switchRatio) {
		t.Errorf("200 ms wheel switch ratio = %v, want NaN (no context switches counted)", w200.switchRatio)
	}
	table := httpTable(rows)
	if len(table) != 2 || table[0][0] != "200" || table[0][6] != "1.50×" || table[0][7] != "—" || table[0][15] != "20.0" {
		t.Errorf("table = %q, want one row per point, 200 ms first with ratio 1.50×, no switch ratio and 20.0 wake-ups per fire", table)
	}
}

// The context-switch ratio is per request, within each round, then the
// median; a round where either server counted none is left out.
func TestHTTPRowsSwitchesPerRequest(t *testing.T) {
	run := func(round int, lib string, switches, requests int64) httpServer {
		return httpServer{Round: round, DeadlineMs: 50, Conns: 30, Lib: lib, CPUS: 1, MaxRSSMiB: 10,
			Wakeups: -1, Fired: -1, CtxSwitches: switches, Requests: requests}
	}
	rows := httpRows([]httpServer{
		run(1, "wheel", 900, 100), run(1, "runtime", 1000, 100), // 0.9
		run(2, "wheel", 1200, 200), run(2, "runtime", 500, 100), // 6 ÷ 5 = 1.2
		run(3, "wheel", 1000, 100), run(3, "runtime", 1000, 100), // 1
		run(4, "wheel", 0, 100), run(4, "runtime", 1000, 100), // not counted
	})
	w := rows[0]
	if w.lib != "wheel" || w.switchRatio != 1 {
		t.Errorf("wheel = %+v, want switch ratio 1 (median of 0.9, 1.2 and 1)", w)
	}
	if got := httpTable(rows)[0][7]; got != "1.00×" {
		t.Errorf("table's switch ratio = %q, want 1.00×", got)
	}
}

func TestFireCostRowsPerFiredTimer(t *testing.T) {
	run := func(round int, lib string, cpu float64, fires int64) fireCost {
		return fireCost{Round: round, Lib: lib, DeadlineMs: 200, FiresPerS: 30, StopsPerS: 3000, CPUS: cpu,
			Armed: 900, Stops: 100, Fires: fires, Wakeups: -1, Fired: -1}
	}
	w1, w2 := run(1, "wheel", 0.5, 100), run(2, "wheel", 0.9, 100)
	w1.Wakeups, w1.Fired, w2.Wakeups, w2.Fired = 10, 100, 30, 100
	r1, r2 := run(1, "runtime", 0.4, 100), run(2, "runtime", 1.0, 100)
	// Context switches per fired timer ÷ the runtime's: 0.8 and 1.4.
	w1.CtxSwitches, r1.CtxSwitches, w2.CtxSwitches, r2.CtxSwitches = 800, 1000, 700, 500
	rows := fireCostRows([]fireCost{
		w1, r1, run(1, "none", 0.3, 0),
		w2, r2, run(2, "none", 0.6, 0),
	})
	if len(rows) != 3 || rows[0].lib != "wheel" || rows[1].lib != "runtime" || rows[2].lib != "none" {
		t.Fatalf("rows = %+v, want wheel, runtime, none at one load", rows)
	}
	w := rows[0]
	// Per fired timer: 5000 and 9000 µs; less the loop's: 2000 and 3000 µs;
	// ÷ the runtime's in the same round: 1.25 and 0.9; per AfterFunc or
	// Stop (1000 calls): 500k and 900k ns; wake-ups per fire 0.1 and 0.3.
	if w.perFire != 7000 || w.share != 2500 || math.Abs(w.ratio-1.075) > 1e-9 || w.perOp != 700e3 ||
		w.wakeups != 20 || math.Abs(w.wakeupsPerFire-0.2) > 1e-9 || math.Abs(w.switchRatio-1.1) > 1e-9 {
		t.Errorf("wheel = %+v, want per fire 7000 µs, less the loop's 2500 µs, ratio 1.075, 700000 ns per call, 20 wake-ups, 0.2 per fire, switch ratio 1.1", w)
	}
	if n := rows[2]; !math.IsNaN(n.perFire) || !math.IsNaN(n.perOp) {
		t.Errorf("none = %+v, want no per-fire or per-call cost", n)
	}
	// CPU ÷ the runtime's process's in the same round: 1.25 and 0.9.
	if math.Abs(w.cpuRatio-1.075) > 1e-9 || rows[1].cpuRatio != 1 {
		t.Errorf("CPU ratios = %v (wheel), %v (runtime), want 1.075 and 1", w.cpuRatio, rows[1].cpuRatio)
	}
}

// TestStopProbeTarget: the stop probe's rows (no fires) are judged by their
// CPU against the runtime's, the worst deadline deciding.
func TestStopProbeTarget(t *testing.T) {
	run := func(deadline float64, lib string, cpu float64) fireCost {
		return fireCost{Round: 1, Lib: lib, DeadlineMs: deadline, FiresPerS: 0.0001, StopsPerS: 300, CPUS: cpu,
			Armed: 3000, Stops: 3000, Wakeups: -1, Fired: -1}
	}
	r := &report{fireCost: []fireCost{
		run(50, "wheel", 0.45), run(50, "runtime", 0.5), run(50, "none", 0.4),
		run(200, "wheel", 0.55), run(200, "runtime", 0.5), run(200, "none", 0.4),
	}}
	var b md
	r.targets(&b)
	if !strings.Contains(b.String(), "| stop probe (§9a: 300 timers a second, every one stopped 10 ms later) CPU ≤ 1.00× runtime's (the worst deadline) | 1.10× | **missed** |") {
		t.Errorf("targets lack the stop probe at 1.10×, missed:\n%s", b.String())
	}
}

// TestReadMatrix: a cell of benchstat's CSV becomes a ratio, marked when
// over its target (time, or bytes where the runtime allocates none).
func TestReadMatrix(t *testing.T) {
	dir := t.TempDir()
	csv := `goos: linux
,runtime,,wheel,,,
,sec/op,CI,sec/op,CI,vs base,P
Matrix/wheel=new/op=resetlater/pending=1k/d=10s-2,1e-07,1%,8e-08,2%,-20.00%,p=0.002 n=6
Matrix/wheel=default/op=afterfuncstop/pending=0/d=1ms-2,2e-07,1%,1e-07,2%,-50.00%,p=0.002 n=6
geomean,1e-07,,8e-08,,-20.00%,

,runtime,,wheel,,,
,B/op,CI,B/op,CI,vs base,P
Matrix/wheel=new/op=resetlater/pending=1k/d=10s-2,0,0%,0,0%,~,p=1.000 n=6
Matrix/wheel=default/op=afterfuncstop/pending=0/d=1ms-2,112,0%,48,0%,-57.14%,p=0.002 n=6
`
	if err := os.WriteFile(filepath.Join(dir, "matrix.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "matrix.txt"), []byte("mode: quick\nfailed: round 2\n\ngoos: linux\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := readMatrix(dir)
	if err != nil {
		t.Fatal(err)
	}
	if m.env.values["mode"] != "quick" || len(m.env.failed) != 1 {
		t.Errorf("env = %+v", m.env)
	}
	for _, c := range []struct {
		k    matrixKey
		want string
	}{
		{matrixKey{"new", "resetlater", "1k", "10s"}, "**0.80×** ✗"}, // over 0.70× with 1k pending
		{matrixKey{"default", "afterfuncstop", "0", "1ms"}, "0.50× 48 B"},
	} {
		cell := m.cells[c.k]
		if cell == nil {
			t.Fatalf("no cell %+v", c.k)
		}
		if got := cell.String(c.k.pending); got != c.want {
			t.Errorf("%+v: %q, want %q", c.k, got, c.want)
		}
	}
	if over, all := m.over(); over != 1 || all != 2 {
		t.Errorf("over() = %d of %d, want 1 of 2", over, all)
	}
}

// TestReruns: steps run again after the run are named at the top, and the
// report no longer says every figure comes from one run.
func TestReruns(t *testing.T) {
	e, err := parseEnv("mode: full\nrerun: headline.txt, on a quiet machine\ncommand: x\n")
	if err != nil {
		t.Fatal(err)
	}
	r := &report{env: e}
	out := r.markdown()
	if !strings.Contains(out, "with the same commands: headline.txt, on a quiet machine.") || strings.Contains(out, "from this one run") {
		t.Errorf("the report's head does not name the rerun:\n%.600s", out)
	}
}
