package main

// The JSON lines written by the workload programs under bench/cmd; only the
// fields the report uses.

type summary struct {
	Count int       `json:"count"`
	P50   float64   `json:"p50_ms"`
	P90   float64   `json:"p90_ms"`
	P99   float64   `json:"p99_ms"`
	Max   float64   `json:"max_ms"`
	CDF   []float64 `json:"cdf_ms"`
}

type accuracy struct {
	Lib        string  `json:"lib"`
	TickMs     float64 `json:"tick_ms"`
	Load       string  `json:"load"`
	N          int     `json:"n"`
	SpreadMs   float64 `json:"spread_ms"`
	Fired      int     `json:"fired"`
	GraceS     float64 `json:"grace_s"`
	Early      int     `json:"early"`
	MaxEarlyMs float64 `json:"max_early_ms"`
	Lateness   summary `json:"lateness"`
}

type burst struct {
	Lib       string  `json:"lib"`
	N         int     `json:"n"`
	WindowMs  float64 `json:"window_ms"`
	ArmS      float64 `json:"arm_s"`
	DrainMs   float64 `json:"drain_ms"`
	AllByMs   float64 `json:"all_started_ms"`
	CPUS      float64 `json:"cpu_s"`
	GCCycles  uint32  `json:"gc_cycles"`
	GCPauseMs float64 `json:"gc_pause_ms"`
	Early     int     `json:"early"`
	Lateness  summary `json:"lateness"`
	Peak      int     `json:"peak_goroutines"`
}

type purgatory struct {
	Lib           string  `json:"lib"`
	Rate          float64 `json:"rate_per_s"`
	DurationS     float64 `json:"duration_s"`
	TimeoutMs     float64 `json:"timeout_ms"`
	P50Ms         float64 `json:"p50_ms"`
	P75Ms         float64 `json:"p75_ms"`
	Requests      int64   `json:"requests"`
	Completed     int64   `json:"completed"`
	TimedOut      int64   `json:"timed_out"`
	EarlyTimeouts int64   `json:"early_timeouts"`
	CPUSPerM      float64 `json:"cpu_s_per_m"`
	GCCyclesPerM  float64 `json:"gc_cycles_per_m"`
	GCPauseMsPerM float64 `json:"gc_pause_ms_per_m"`
	PeakHeapMB    float64 `json:"peak_heap_mb"`
	Lateness      summary `json:"timeout_lateness"`
}

type idle struct {
	Lib         string  `json:"lib"`
	TickMs      float64 `json:"tick_ms"`
	N           int     `json:"n"`
	DurationS   float64 `json:"duration_s"`
	CPUS        float64 `json:"cpu_s"`
	CPUPercent  float64 `json:"cpu_percent_of_core"`
	Wakeups     int64   `json:"wakeups"`
	WakeupsPerS float64 `json:"wakeups_per_s"`
}

type report struct {
	docs      string
	ops       benchSet
	headline  benchSet
	heap      benchSet
	parallel  benchSet
	accuracy  []accuracy
	burst     []burst
	purgatory []purgatory
	idle      []idle
	env       env
	benchstat string
}
