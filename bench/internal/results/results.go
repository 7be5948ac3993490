// Package results is the schema of the JSON lines the workload programs
// under bench/cmd write and bench/cmd/report reads: one type per workload,
// shared so that writer and reader cannot drift apart.
package results

import "github.com/go-timingwheel/timingwheel/bench/internal/measure"

// Accuracy is one run of bench/cmd/accuracy: firing lateness of timers spread over a window.
type Accuracy struct {
	Workload   string          `json:"workload"`
	Lib        string          `json:"lib"`
	TickMs     float64         `json:"tick_ms"`
	Load       string          `json:"load"`
	GOMAXPROCS int             `json:"gomaxprocs"`
	N          int             `json:"n"`
	SpreadMs   float64         `json:"spread_ms"`
	Fired      int             `json:"fired"` // within the grace period after the last deadline
	GraceS     float64         `json:"grace_s"`
	Early      int             `json:"early"`
	MaxEarlyMs float64         `json:"max_early_ms"`
	Lateness   measure.Summary `json:"lateness"`
}

// Burst is one run of bench/cmd/burst: many timers due within one short window.
type Burst struct {
	Workload       string          `json:"workload"`
	Lib            string          `json:"lib"`
	GOMAXPROCS     int             `json:"gomaxprocs"`
	N              int             `json:"n"`
	WindowMs       float64         `json:"window_ms"`
	ArmS           float64         `json:"arm_s"`
	DrainMs        float64         `json:"drain_ms"` // last callback start − window end
	AllByMs        float64         `json:"all_started_ms"`
	CPUS           float64         `json:"cpu_s"`
	GCCycles       uint32          `json:"gc_cycles"`
	GCPauseMs      float64         `json:"gc_pause_ms"`
	Early          int             `json:"early"`
	Lateness       measure.Summary `json:"lateness"`
	PeakGoroutines int             `json:"peak_goroutines"`
}

// Purgatory is one run of bench/cmd/purgatory: a Kafka-style request timeout load.
type Purgatory struct {
	Workload      string          `json:"workload"`
	Lib           string          `json:"lib"`
	GOMAXPROCS    int             `json:"gomaxprocs"`
	Rate          float64         `json:"rate_per_s"`
	DurationS     float64         `json:"duration_s"`
	TimeoutMs     float64         `json:"timeout_ms"`
	P50Ms         float64         `json:"p50_ms"`
	P75Ms         float64         `json:"p75_ms"`
	Requests      int64           `json:"requests"`
	Completed     int64           `json:"completed"`
	StopsTrue     int64           `json:"stops_true"`
	TimedOut      int64           `json:"timed_out"`
	EarlyTimeouts int64           `json:"early_timeouts"`
	CPUSPerM      float64         `json:"cpu_s_per_m"`
	GCCyclesPerM  float64         `json:"gc_cycles_per_m"`
	GCPauseMsPerM float64         `json:"gc_pause_ms_per_m"`
	PeakHeapMB    float64         `json:"peak_heap_mb"`
	Lateness      measure.Summary `json:"timeout_lateness"`
	// Wakeups counts the library's poller wake-ups over the run, -1 if it
	// does not count them; WakeupsPerTick divides them by the 1 ms ticks
	// elapsed.
	Wakeups        int64   `json:"poller_wakeups"`
	WakeupsPerTick float64 `json:"poller_wakeups_per_tick"`
	// Per request, over the same span as CPUSPerM: heap allocations and
	// bytes, goroutines created, the process's context switches (getrusage:
	// voluntary and involuntary, so threads parked and woken), and the GC's
	// CPU (runtime/metrics /cpu/classes/gc/total, an estimate). Counts, not
	// times: they repeat from run to run on a noisy machine where CPU does
	// not.
	AllocsPerReq     float64 `json:"allocs_per_req,omitempty"`
	BytesPerReq      float64 `json:"bytes_per_req,omitempty"`
	GoroutinesPerReq float64 `json:"goroutines_per_req,omitempty"`
	CtxSwitchPerReq  float64 `json:"ctx_switches_per_req,omitempty"`
	GCCPUNsPerReq    float64 `json:"gc_cpu_ns_per_req,omitempty"`
}

// Idle is one run of bench/cmd/idle: the cost of holding far-future timers.
type Idle struct {
	Workload    string  `json:"workload"`
	Lib         string  `json:"lib"`
	TickMs      float64 `json:"tick_ms"`
	GOMAXPROCS  int     `json:"gomaxprocs"`
	N           int     `json:"n"`
	DurationS   float64 `json:"duration_s"`
	CPUS        float64 `json:"cpu_s"`
	CPUPercent  float64 `json:"cpu_percent_of_core"`
	Wakeups     int64   `json:"wakeups"` // -1: the library does not count them
	WakeupsPerS float64 `json:"wakeups_per_s"`
}

// HTTPServer is one server process of one round of bench/cmd/httpserver: a
// net/http server under keep-alive load that arms a timer per connection
// (idle timeout, reset on every read) and per request (deadline). The
// server fills in its own figures; the driver adds the round and what the
// server's client saw. CPU, requests and the wheel's counters cover the
// measured window; peak RSS and the early checks, the server's whole life.
type HTTPServer struct {
	Workload       string  `json:"workload"`
	Lib            string  `json:"lib"`     // "wheel", "runtime" or "none" (no timers)
	TickMs         float64 `json:"tick_ms"` // the wheel's; 0 for the others
	GOMAXPROCS     int     `json:"gomaxprocs"`
	Round          int     `json:"round"` // servers of one round ran at the same time
	Conns          int     `json:"conns"`
	WarmupS        float64 `json:"warmup_s"`    // load before the measured window
	DurationS      float64 `json:"duration_s"`  // the measured window
	IntervalMs     float64 `json:"interval_ms"` // between requests on one connection
	IdleMs         float64 `json:"idle_ms"`
	DeadlineMs     float64 `json:"deadline_ms"`
	SlowDeadlineMs float64 `json:"slow_deadline_ms"`
	SlowFrac       float64 `json:"slow_frac"` // of requests, which wait for their slow deadline
	IdleFrac       float64 `json:"idle_frac"` // of connections, which fall silent once

	CPUS float64 `json:"cpu_s"` // the server process's user+sys (getrusage)
	// CtxSwitches is the server process's context switches in the window,
	// voluntary and not (getrusage): how often its threads slept and were
	// woken, a count where CPU time at light load is mostly noise.
	CtxSwitches int64   `json:"ctx_switches"`
	MaxRSSMiB   float64 `json:"max_rss_mib"`
	Requests    int64   `json:"requests"` // handled by the server
	Wakeups     int64   `json:"wakeups"`  // the wheel's poller wake-ups; -1 for the others
	Fired       int64   `json:"fired"`    // the wheel's Stats; -1 for the others
	Stopped     int64   `json:"stopped"`

	DeadlineFires int64 `json:"deadline_fires"` // slow requests whose context the timer cancelled
	DeadlineEarly int64 `json:"deadline_early"` // … seen cancelled before their deadline
	IdleFires     int64 `json:"idle_fires"`     // connections the idle timer closed
	IdleEarly     int64 `json:"idle_early"`     // … before idle had passed since the last read

	// From the client: Responses, Skipped and Latency over its window, by
	// its clock; IdleUnclosed and Redials over its life.
	Responses    int64           `json:"responses"`
	Skipped      int64           `json:"skipped"`       // sends missed, having fallen behind
	Latency      measure.Summary `json:"latency"`       // of ordinary requests, send to last byte
	IdleUnclosed int64           `json:"idle_unclosed"` // idle connections the server left open for 2× idle
	Redials      int64           `json:"redials"`       // connections lost while not idle
}

// FireCost is one process of bench/cmd/firecost: a light load in which
// most timers are stopped soon after they are armed and a few fire, and
// what the whole process spent on it. Counts and CPU cover the measured
// window, after every timer armed in it could have come due.
type FireCost struct {
	Workload   string  `json:"workload"`
	Lib        string  `json:"lib"`     // "wheel", "runtime" or "none" (the load loop, no timers)
	TickMs     float64 `json:"tick_ms"` // the wheel's; 0 for the others
	GOMAXPROCS int     `json:"gomaxprocs"`
	Round      int     `json:"round"` // processes of one round ran one after another
	DeadlineMs float64 `json:"deadline_ms"`
	StopMs     float64 `json:"stop_ms"`     // how long after arming a timer is stopped
	FiresPerS  float64 `json:"fires_per_s"` // asked for: timers left to fire
	StopsPerS  float64 `json:"stops_per_s"` // asked for: timers stopped
	LoopMs     float64 `json:"loop_ms"`     // the load's period
	WarmupS    float64 `json:"warmup_s"`
	DurationS  float64 `json:"duration_s"`

	CPUS      float64 `json:"cpu_s"` // the process's user+sys (getrusage) over the window
	Armed     int64   `json:"armed"`
	Stops     int64   `json:"stops"`      // Stop calls, each of which returned true
	Fires     int64   `json:"fires"`      // callbacks run
	Early     int64   `json:"early"`      // … before their deadline had elapsed since they were armed
	Missed    int64   `json:"missed"`     // loops that ran late by more than a period, in the window
	LateStops int64   `json:"late_stops"` // Stops that came after the deadline (over the life), found the timer fired
	// CtxSwitches is the process's context switches over the window,
	// voluntary and not (getrusage): how often its threads slept and were
	// woken.
	CtxSwitches int64 `json:"ctx_switches"`
	// Wakeups and Fired are the wheel's Stats over the window; -1 for the others.
	Wakeups int64 `json:"wakeups"`
	Fired   int64 `json:"fired"`
}
