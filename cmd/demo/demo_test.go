package main

import (
	"strings"
	"testing"
	"time"
)

// TestDemoTiny runs both phases small and checks the figures are sane: the
// load happened, deadlines fired, and neither timer kind fired early.
func TestDemoTiny(t *testing.T) {
	cfg := config{
		Conns: 1000, Duration: 300 * time.Millisecond, Rate: 20_000,
		Idle: 150 * time.Millisecond, Deadline: 50 * time.Millisecond,
		P50: 10 * time.Millisecond, P75: 30 * time.Millisecond,
		Shards: 2, Tick: time.Millisecond, Size: 512, Seed: 1,
	}
	wheel, err := wheelBackend(cfg.Tick, cfg.Size)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	results := []result{run(cfg, runtimeBackend(), &out), run(cfg, wheel, &out)}
	for _, r := range results {
		if r.Requests == 0 || r.Resets == 0 || r.Fires == 0 || r.TimedOut == 0 || r.Completed == 0 {
			t.Errorf("%s: no load: %+v", r.Name, r)
		}
		if r.Completed+r.TimedOut != r.Requests {
			t.Errorf("%s: %d completed + %d timed out != %d requests", r.Name, r.Completed, r.TimedOut, r.Requests)
		}
		if r.Early != 0 {
			t.Errorf("%s: %d early fires, up to %v early", r.Name, r.Early, r.MaxEarly)
		}
		if r.Fires != r.TimedOut+r.IdleFires {
			t.Errorf("%s: %d fires != %d deadlines + %d idle timeouts", r.Name, r.Fires, r.TimedOut, r.IdleFires)
		}
		if r.LateMax < r.LateP99 || r.LateP99 < r.LateP50 {
			t.Errorf("%s: lateness quantiles out of order: %v %v %v", r.Name, r.LateP50, r.LateP99, r.LateMax)
		}
	}
	printTable(&out, cfg, results[0], results[1])
	for _, want := range []string{"early fires", "lateness p99", "timingwheel", "time.AfterFunc"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}

// TestDemoProgressLines: on a terminal the progress line is rewritten in
// place; piped, each progress report is a line of its own.
func TestDemoProgressLines(t *testing.T) {
	for _, live := range []bool{false, true} {
		cfg := config{
			Conns: 100, Duration: 300 * time.Millisecond, Rate: 1000,
			Idle: time.Second, Deadline: 50 * time.Millisecond,
			P50: time.Millisecond, P75: 2 * time.Millisecond,
			Shards: 1, Tick: time.Millisecond, Size: 64, Seed: 1,
			Live: live, Progress: 100 * time.Millisecond,
		}
		var out strings.Builder
		run(cfg, runtimeBackend(), &out)
		got := out.String()
		if !strings.Contains(got, "resets/s") {
			t.Fatalf("live %v: no progress printed: %q", live, got)
		}
		if live != strings.Contains(got, "\r") {
			t.Errorf("live %v: output %q", live, got)
		}
		if !live && (strings.Count(got, "resets/s") != strings.Count(got, "\n") || !strings.HasSuffix(got, "\n")) {
			t.Errorf("piped: want one line per progress report, got %q", got)
		}
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h histogram
	for i := 1; i <= 1000; i++ {
		h.add(time.Duration(i) * time.Millisecond)
	}
	for _, c := range []struct {
		q    float64
		want time.Duration
	}{{0.5, 500 * time.Millisecond}, {0.99, 990 * time.Millisecond}, {1, time.Second}} {
		got := h.quantile(c.q)
		if got < c.want || float64(got) > float64(c.want)*1.04 {
			t.Errorf("quantile(%v) = %v, want within 4%% above %v", c.q, got, c.want)
		}
	}
	if h.maximum() != time.Second {
		t.Errorf("maximum = %v", h.maximum())
	}
}

func TestDemoRejectsBadConfig(t *testing.T) {
	if err := demo(config{}, &strings.Builder{}); err == nil {
		t.Fatal("zero config accepted")
	}
}
