// Command demo runs a simulated server twice, first on time.AfterFunc and
// then on a timing wheel, and prints what each cost side by side.
//
// The server has -conns connections. Each has an idle timeout that every
// bit of activity re-arms with Reset. Requests arrive at -rate per second
// on random connections; each arms a -deadline timer with AfterFunc and,
// after a log-normal latency (-p50, -p75), completes and stops it. Most
// requests beat their deadline, so most timers are stopped rather than
// fired, as on a real server. Both phases replay the same seeded load.
//
// For every callback it compares the time from just before arming to the
// start of the callback, by the monotonic clock, with the duration asked
// for: shorter is an early fire, longer is lateness. CPU time is the whole
// process's (getrusage), load generation included, which is the same in
// both phases.
//
//	go run ./cmd/demo                      # 200k connections, 20 s per phase
//	go run ./cmd/demo -conns 1000000 -rate 200000 -duration 30s
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"
)

func main() {
	cfg := config{Seed: 1}
	flag.IntVar(&cfg.Conns, "conns", 200_000, "connections, each with an idle timeout re-armed on activity")
	flag.DurationVar(&cfg.Duration, "duration", 20*time.Second, "how long each phase runs")
	flag.Float64Var(&cfg.Rate, "rate", 100_000, "requests per second over all connections")
	flag.DurationVar(&cfg.Idle, "idle", 5*time.Second, "idle timeout")
	flag.DurationVar(&cfg.Deadline, "deadline", 100*time.Millisecond, "per-request deadline")
	flag.DurationVar(&cfg.P50, "p50", 10*time.Millisecond, "median request latency")
	flag.DurationVar(&cfg.P75, "p75", 30*time.Millisecond, "75th percentile request latency")
	flag.IntVar(&cfg.Shards, "shards", runtime.GOMAXPROCS(0), "goroutines generating the load")
	flag.DurationVar(&cfg.Tick, "tick", time.Millisecond, "wheel tick")
	flag.IntVar(&cfg.Size, "size", 512, "wheel size (slots per level)")
	flag.Parse()
	cfg.Live = isTerminal(os.Stdout)
	if err := demo(cfg, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

// demo runs both phases and prints the comparison.
func demo(cfg config, w io.Writer) error {
	if cfg.Conns <= 0 || cfg.Duration <= 0 || cfg.Rate < 0 || cfg.Idle <= 0 || cfg.Deadline <= 0 ||
		cfg.P50 <= 0 || cfg.P75 <= cfg.P50 {
		return fmt.Errorf("need positive -conns, -duration, -idle, -deadline and 0 < -p50 < -p75")
	}
	fmt.Fprintf(w, "%d connections (idle timeout %v, re-armed on activity), %.0f requests/s (deadline %v, latency p50 %v p75 %v), %v per phase, GOMAXPROCS %d\n",
		cfg.Conns, cfg.Idle, cfg.Rate, cfg.Deadline, cfg.P50, cfg.P75, cfg.Duration, runtime.GOMAXPROCS(0))

	rt := run(cfg, runtimeBackend(), w)
	runtime.GC()
	wheel, err := wheelBackend(cfg.Tick, cfg.Size)
	if err != nil {
		return err
	}
	tw := run(cfg, wheel, w)
	printTable(w, cfg, rt, tw)
	return nil
}

// printTable writes the results side by side; ratio is wheel over runtime.
func printTable(w io.Writer, cfg config, rt, tw result) {
	fmt.Fprintln(w)
	wheelName := fmt.Sprintf("timingwheel (tick %v)", cfg.Tick)
	line := func(name, a, b, ratio string) {
		fmt.Fprintf(w, "%-21s %16s %24s %15s\n", name, a, b, ratio)
	}
	line("", rt.Name, wheelName, "wheel/runtime")
	row := func(name string, a, b float64, format string) {
		ratio := ""
		if a > 0 {
			ratio = fmt.Sprintf("%.2f×", b/a)
		}
		line(name, fmt.Sprintf(format, a), fmt.Sprintf(format, b), ratio)
	}
	count := func(name string, a, b int64) {
		line(name, fmt.Sprint(a), fmt.Sprint(b), "")
	}
	if rt.CPUOK {
		row("CPU seconds", rt.CPU.Seconds(), tw.CPU.Seconds(), "%.2f")
	} else {
		line("CPU seconds", "n/a", "n/a", "")
	}
	row("peak heap (MB)", mb(rt.PeakHeap), mb(tw.PeakHeap), "%.1f")
	row("GC cycles", float64(rt.GCCycles), float64(tw.GCCycles), "%.0f")
	row("GC pause total (ms)", ms(rt.GCPause), ms(tw.GCPause), "%.2f")
	row("lateness p50 (ms)", ms(rt.LateP50), ms(tw.LateP50), "%.2f")
	row("lateness p99 (ms)", ms(rt.LateP99), ms(tw.LateP99), "%.2f")
	row("lateness max (ms)", ms(rt.LateMax), ms(tw.LateMax), "%.2f")
	count("early fires", rt.Early, tw.Early)
	count("timers fired", rt.Fires, tw.Fires)
	count("  request deadlines", rt.TimedOut, tw.TimedOut)
	count("  idle timeouts", rt.IdleFires, tw.IdleFires)
	count("requests completed", rt.Completed, tw.Completed)
	count("idle timeouts reset", rt.Resets, tw.Resets)
	count("most timers pending", rt.MaxPending, tw.MaxPending)
	if rt.Early+tw.Early > 0 {
		fmt.Fprintf(w, "\nEARLY FIRES: %s %d (up to %v early), %s %d (up to %v early)\n",
			rt.Name, rt.Early, rt.MaxEarly, tw.Name, tw.Early, tw.MaxEarly)
	}
	fmt.Fprintln(w, "\nCPU is the whole process (load generation included, the same in both phases);")
	fmt.Fprintln(w, "lateness is callback start minus (arm time + duration), by the monotonic clock.")
}

func mb(b uint64) float64        { return float64(b) / (1 << 20) }
func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// isTerminal reports whether f is a terminal (a character device), where a
// progress line may be rewritten in place.
func isTerminal(f *os.File) bool {
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
