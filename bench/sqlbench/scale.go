package sqlbench

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// The scale measurement: a durable.Queue with a backlog of ScaleConfig.Tasks pending tasks (10M
// for issue 30) on each store, PostgreSQL, SQLite and a Redis Cluster, through the same Queue
// code. One store at a time, each from empty:
//
//  1. Empty: the claim cost (see ScaleClaim) and Stats' time.
//  2. Fill: Tasks tasks added by Producers goroutines through AddBatch of Batch tasks, due at
//     times spread evenly at random over Horizon from Offset after the run's start, so that none
//     falls due during the measurement (a task due then would be a fire, not backlog, and Stats'
//     due-now count grows with the tasks overdue: docs/design/pg-counts.md). Adds/s per
//     segment. The fill stops at OverviewAt pending (1M), where the claim cost, Stats and
//     timerd's dashboard overview are measured, then goes on to Tasks.
//  3. Full: the bytes the store holds per task (PostgreSQL: pg_total_relation_size of pgwheel's
//     tables, indexes and TOAST included; SQLite: the file after a WAL checkpoint; Redis:
//     used_memory summed over the masters, each a delta from before the fill), the claim cost,
//     and Stats' time over StatsCalls calls.
//  4. Lateness: a worker (Concurrency slots) runs for Window, a probe task added every
//     ProbeEvery due 200 ms after its add; lateness is its handler's start minus that due time.
//  5. Churn: Churn tasks added due now, then run by the worker until every one has been
//     settled (churn/s); the claim cost and Stats again, a second Window of probes, and the
//     claim cost and Stats once more.
//
// Every phase checks that it measured what it names: Stats counts the backlog (scheduled, not
// due) at every stop, every probe and churn task ran exactly once, and no claim of the cost
// measurement leased a task.

// ScaleConfig describes a scale measurement.
type ScaleConfig struct {
	// Stores to measure, in order: "postgres", "sqlite", "redis-cluster".
	Stores []string
	// PostgresDSN is the database of "postgres"; each run migrates pgwheel's tables into a
	// schema of its own and drops it at the end.
	PostgresDSN string
	// SQLiteDir holds "sqlite"'s file, removed at the end.
	SQLiteDir string
	// RedisClusterAddrs seed "redis-cluster"; the namespace's keys are deleted at the end.
	RedisClusterAddrs []string

	Tasks        int           // the backlog
	OverviewAt   int           // the backlog at the intermediate stop (1M); 0 or ≥ Tasks: none
	Batch        int           // tasks per AddBatch
	Producers    int           // goroutines adding
	PayloadBytes int           // each task's payload (at least 8: the due time the producer asked)
	Offset       time.Duration // the backlog's first due time, after the run's start
	Horizon      time.Duration // the backlog is due over [Offset, Offset+Horizon)
	Concurrency  int           // the worker's handler slots
	Churn        int           // tasks pushed through with the backlog in place
	Window       time.Duration // each probe window
	ProbeEvery   time.Duration // a probe every
	StatsCalls   int           // Stats calls timed at each stop (and overview requests)
	// Overdue makes the backlog due in the past, over [Offset+Horizon, Offset) before the start:
	// tasks no worker has run, as after an outage of the workers. Only the fill, the bytes,
	// Stats (which must count the backlog as due now) and the overview are measured: no claim,
	// worker or churn, which would run the backlog.
	Overdue bool
	// Keep leaves each store's data in place at the end (for EXPLAIN and the like; the progress
	// line says where), to be dropped by hand.
	Keep bool
	// FillLimit, if positive, bounds the fill's time: no batch is started after it, and the
	// measurement goes on with the backlog reached (ScaleResult.Tasks), for a store too slow to
	// reach Tasks in the time at hand.
	FillLimit  time.Duration
	ClaimCalls int // Store.Claim calls timed at each stop

	// Timerd is the path of a timerd binary; the overview is measured at the intermediate stop
	// (or at Tasks if there is none) by a timerd process on the same store. Empty: not measured.
	Timerd string
	// Progress, if set, receives a line on each phase.
	Progress func(string)
}

// ScaleTiming is the median and maximum of repeated calls.
type ScaleTiming struct {
	Calls  int           `json:"calls"`
	Median time.Duration `json:"median_ns"`
	Max    time.Duration `json:"max_ns"`
}

// ScaleClaim is the claim cost at one backlog: Store.Claim of partition 0, limit 32, with
// nothing due (the round trip an idle worker makes on each wake-up: the reaping of expired
// leases and the search for the next due time), and Stats' time.
type ScaleClaim struct {
	Pending int         `json:"pending"`
	Claim   ScaleTiming `json:"claim"`
	Stats   ScaleTiming `json:"stats"`
}

// ScaleFill is one segment of the fill.
type ScaleFill struct {
	From, To   int
	Took       time.Duration `json:"took_ns"`
	AddsPerSec float64       `json:"adds_per_sec"`
}

// ScaleLateness is one probe window's lateness.
type ScaleLateness struct {
	Probes int           `json:"probes"`
	P50    time.Duration `json:"p50_ns"`
	P99    time.Duration `json:"p99_ns"`
	Max    time.Duration `json:"max_ns"`
	Early  int           `json:"early"`
}

// ScaleOverview is timerd's dashboard overview (GET /ui/) and GET /v1/stats, each timed as the
// client sees it (request to last byte) on a timerd process on the same store.
type ScaleOverview struct {
	Pending  int         `json:"pending"`
	Overview ScaleTiming `json:"overview"`
	APIStats ScaleTiming `json:"api_stats"`
}

// ScaleResult is one store's figures.
type ScaleResult struct {
	Run          string  `json:"run"` // when the run started (UTC, RFC 3339)
	Store        string  `json:"store"`
	Overdue      bool    `json:"overdue,omitempty"` // ScaleConfig.Overdue
	Tasks        int     `json:"tasks"`
	PayloadBytes int     `json:"payload_bytes"`
	Bytes        int64   `json:"bytes"` // what the backlog added to the store (see ScaleConfig)
	BytesPerTask float64 `json:"bytes_per_task"`
	// BytesPerMaster is Redis's used_memory delta per master, in the order of their addresses.
	BytesPerMaster []int64       `json:"bytes_per_master,omitempty"`
	Fill           []ScaleFill   `json:"fill"`
	AddsPerSec     float64       `json:"adds_per_sec"` // over the whole fill
	Claims         []ScaleClaim  `json:"claims"`       // empty, intermediate stop, full
	Lateness       ScaleLateness `json:"lateness"`     // with the backlog
	ChurnPerSec    float64       `json:"churn_per_sec"`
	AfterChurn     ScaleClaim    `json:"after_churn"`
	LatenessAfter  ScaleLateness `json:"lateness_after_churn"`
	// AfterWindow is the claim cost and Stats again at the end of the second window (Window
	// after the churn), with the worker stopped: what a store's upkeep or autovacuum recovered.
	AfterWindow *ScaleClaim    `json:"after_window,omitempty"`
	Overview    *ScaleOverview `json:"overview,omitempty"`
	Took        time.Duration  `json:"took_ns"`
	Err         string         `json:"err,omitempty"`
}

// scaleStore is one store opened for a measurement.
type scaleStore struct {
	store durable.Store
	// size is what the store holds now, in bytes (per master on Redis).
	size func(ctx context.Context) ([]int64, error)
	// timerd is the flags and environment that run timerd on this store's namespace.
	timerd func() (args, env []string)
	// where says where the data is (a schema, a file, a namespace).
	where string
	// drop deletes the store's tasks, unless keep, and releases it.
	drop func(ctx context.Context, keep bool) error
}

// Scale measures cfg's stores one after the other and returns a result per store; a failed
// store's result has Err set. It returns an error only for a config it cannot run.
func Scale(ctx context.Context, cfg ScaleConfig) ([]ScaleResult, error) {
	if cfg.Tasks <= 0 || cfg.Batch <= 0 || cfg.Producers <= 0 || cfg.PayloadBytes < 8 || cfg.Horizon <= 0 ||
		cfg.Offset <= 0 || cfg.Concurrency <= 0 || cfg.Churn <= 0 || cfg.Window <= 0 || cfg.ProbeEvery <= 0 ||
		cfg.StatsCalls <= 0 || cfg.ClaimCalls <= 0 || len(cfg.Stores) == 0 {
		return nil, fmt.Errorf("sqlbench: incomplete scale config %+v", cfg)
	}
	if cfg.Progress == nil {
		cfg.Progress = func(string) {}
	}
	run := time.Now()
	var out []ScaleResult
	for _, name := range cfg.Stores {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		r := ScaleResult{Run: run.UTC().Format(time.RFC3339), Store: name, Overdue: cfg.Overdue, Tasks: cfg.Tasks, PayloadBytes: cfg.PayloadBytes}
		start := time.Now()
		err := func() (err error) {
			s, err := openScaleStore(ctx, cfg, name, strconv.FormatInt(run.UnixNano(), 36))
			if err != nil {
				return err
			}
			defer func() {
				if cfg.Keep {
					cfg.Progress(name + ": keeping the data: " + s.where)
				} else {
					cfg.Progress(name + ": dropping the data")
				}
				err = errors.Join(err, s.drop(context.WithoutCancel(ctx), cfg.Keep))
			}()
			return scaleRun(ctx, cfg, name, s, run, &r)
		}()
		r.Took = time.Since(start)
		if err != nil {
			r.Err = err.Error()
		}
		b, _ := json.Marshal(r)
		cfg.Progress(string(b))
		out = append(out, r)
	}
	return out, nil
}

func openScaleStore(ctx context.Context, cfg ScaleConfig, name, run string) (*scaleStore, error) {
	switch name {
	case "postgres":
		return openScalePostgres(ctx, cfg, run)
	case "sqlite":
		return openScaleSQLite(ctx, cfg)
	case "redis-cluster":
		return openScaleRedisCluster(ctx, cfg, run)
	}
	return nil, fmt.Errorf("sqlbench: no store %q (postgres, sqlite, redis-cluster)", name)
}

// scaleRun runs the phases on s.
func scaleRun(ctx context.Context, cfg ScaleConfig, name string, s *scaleStore, run time.Time, r *ScaleResult) error {
	progress := func(format string, args ...any) { cfg.Progress(name + ": " + fmt.Sprintf(format, args...)) }
	q, err := durable.New(s.store, durable.Options{Concurrency: cfg.Concurrency})
	if err != nil {
		return err
	}
	size0, err := s.size(ctx)
	if err != nil {
		return fmt.Errorf("size: %w", err)
	}
	stop := func(pending int) error {
		c, err := scaleCost(ctx, cfg, q, pending)
		if err == nil {
			r.Claims = append(r.Claims, c)
			progress("%d pending: claim median %v max %v; Stats median %v max %v", pending,
				c.Claim.Median, c.Claim.Max, c.Stats.Median, c.Stats.Max)
		}
		return err
	}
	if err := stop(0); err != nil {
		return err
	}
	payload := scalePayload(cfg.PayloadBytes)
	stops := []int{cfg.Tasks}
	if cfg.OverviewAt > 0 && cfg.OverviewAt < cfg.Tasks {
		stops = []int{cfg.OverviewAt, cfg.Tasks}
	}
	var filled time.Duration
	from := 0
	for _, to := range stops {
		progress("filling %d … %d", from, to)
		start := time.Now()
		var deadline time.Time
		if cfg.FillLimit > 0 {
			deadline = start.Add(cfg.FillLimit - filled)
		}
		reached, err := fill(ctx, cfg, q, run, payload, from, to, deadline, progress)
		if err != nil {
			return fmt.Errorf("fill: %w", err)
		}
		if reached < to {
			progress("the fill limit %v stopped the fill at %d", cfg.FillLimit, reached)
			to, r.Tasks, cfg.Tasks = reached, reached, reached
		}
		took := time.Since(start)
		filled += took
		r.Fill = append(r.Fill, ScaleFill{From: from, To: to, Took: took, AddsPerSec: float64(to-from) / took.Seconds()})
		progress("filled %d … %d in %v: %.0f adds/s", from, to, took.Round(time.Millisecond), float64(to-from)/took.Seconds())
		if err := stop(to); err != nil {
			return err
		}
		if cfg.Timerd != "" && (to == cfg.OverviewAt || len(stops) == 1) {
			progress("overview with %d pending", to)
			o, err := scaleOverview(ctx, cfg, s, to)
			if err != nil {
				return fmt.Errorf("overview: %w", err)
			}
			r.Overview = &o
			progress("overview median %v max %v; /v1/stats median %v max %v", o.Overview.Median, o.Overview.Max,
				o.APIStats.Median, o.APIStats.Max)
		}
		from = to
		if to == cfg.Tasks {
			break
		}
	}
	r.AddsPerSec = float64(cfg.Tasks) / filled.Seconds()
	size1, err := s.size(ctx)
	if err != nil {
		return fmt.Errorf("size: %w", err)
	}
	for i := range size1 {
		d := size1[i] - size0[i]
		r.Bytes += d
		if len(size1) > 1 {
			r.BytesPerMaster = append(r.BytesPerMaster, d)
		}
	}
	r.BytesPerTask = float64(r.Bytes) / float64(cfg.Tasks)
	progress("%.0f bytes per task (%d bytes)", r.BytesPerTask, r.Bytes)
	if cfg.Overdue {
		return nil
	}

	w := newScaleWorker(ctx, q)
	defer w.stop() //nolint:errcheck
	progress("probes for %v", cfg.Window)
	if r.Lateness, err = w.probe(ctx, cfg, payload); err != nil {
		return err
	}
	progress("lateness p50 %v p99 %v max %v (%d probes)", r.Lateness.P50, r.Lateness.P99, r.Lateness.Max, r.Lateness.Probes)
	progress("churning %d", cfg.Churn)
	if r.ChurnPerSec, err = w.churn(ctx, cfg, payload); err != nil {
		return err
	}
	progress("churn %.0f/s", r.ChurnPerSec)
	if r.AfterChurn, err = scaleCost(ctx, cfg, q, cfg.Tasks); err != nil {
		return err
	}
	progress("after the churn: claim median %v max %v; Stats median %v max %v",
		r.AfterChurn.Claim.Median, r.AfterChurn.Claim.Max, r.AfterChurn.Stats.Median, r.AfterChurn.Stats.Max)
	if r.LatenessAfter, err = w.probe(ctx, cfg, payload); err != nil {
		return err
	}
	progress("lateness after the churn p50 %v p99 %v max %v", r.LatenessAfter.P50, r.LatenessAfter.P99, r.LatenessAfter.Max)
	if err := w.stop(); err != nil {
		return err
	}
	c, err := scaleCost(ctx, cfg, q, cfg.Tasks)
	if err != nil {
		return err
	}
	r.AfterWindow = &c
	progress("a window after the churn: claim median %v max %v; Stats median %v max %v",
		c.Claim.Median, c.Claim.Max, c.Stats.Median, c.Stats.Max)
	return w.check(cfg.Churn)
}

// scalePayload is a task's payload: the due time the producer asked for (8 bytes, set per
// task), then n-8 bytes of a callback's JSON, repeated as needed.
func scalePayload(n int) []byte {
	const body = `{"url":"https://orders.example.com/hooks/cancel","method":"POST","order":1001,"reason":"unpaid"}`
	p := make([]byte, n)
	for i := 8; i < n; i += copy(p[i:], body) {
	}
	return p
}

// withDue returns a copy of payload carrying due.
func withDue(payload []byte, due time.Time) []byte {
	p := slices.Clone(payload)
	binary.BigEndian.PutUint64(p, uint64(due.UnixNano()))
	return p
}

func payloadDue(p []byte) (time.Time, error) {
	if len(p) < 8 {
		return time.Time{}, fmt.Errorf("payload of %d bytes, want at least 8", len(p))
	}
	return time.Unix(0, int64(binary.BigEndian.Uint64(p))), nil
}

// backlogDue is task i's due time: spread over the horizon by a fixed permutation, so that
// consecutive adds land far apart in the due order, as independent orders would.
func backlogDue(cfg ScaleConfig, run time.Time, i int) time.Time {
	// Fibonacci hashing of i: a bijection on uint64, evenly spread in its top bits.
	h := uint64(i) * 0x9e3779b97f4a7c15
	frac := float64(h>>11) / float64(1<<53)
	if cfg.Overdue {
		return run.Add(-cfg.Offset - time.Duration(frac*float64(cfg.Horizon)))
	}
	return run.Add(cfg.Offset + time.Duration(frac*float64(cfg.Horizon)))
}

// fill adds the backlog's tasks [from, to), or, if it reaches deadline (unless zero) first,
// [from, reached): no batch starts after the deadline.
func fill(ctx context.Context, cfg ScaleConfig, q *durable.Queue, run time.Time, payload []byte, from, to int, deadline time.Time, progress func(string, ...any)) (reached int, err error) {
	var next atomic.Int64
	next.Store(int64(from))
	var done atomic.Int64
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make(chan error, cfg.Producers)
	var wg sync.WaitGroup
	for range cfg.Producers {
		wg.Go(func() {
			items := make([]durable.Item, 0, cfg.Batch)
			for {
				if !deadline.IsZero() && time.Now().After(deadline) {
					return
				}
				lo := int(next.Add(int64(cfg.Batch))) - cfg.Batch
				if lo >= to {
					return
				}
				items = items[:0]
				for i := lo; i < min(lo+cfg.Batch, to); i++ {
					due := backlogDue(cfg, run, i)
					items = append(items, durable.Item{Key: "backlog-" + strconv.Itoa(i), Payload: withDue(payload, due), At: due})
				}
				added, err := q.AddBatch(ctx, items)
				if err == nil {
					for j, ok := range added {
						if !ok {
							err = fmt.Errorf("task %s was not added", items[j].Key)
							break
						}
					}
				}
				if err != nil {
					errs <- err
					cancel()
					return
				}
				if n := done.Add(int64(len(items))); n/1_000_000 != (n-int64(len(items)))/1_000_000 {
					progress("%d added", int64(from)+n)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	// The batches taken were all added: the range ends where the last began, plus its size.
	return min(int(next.Load()), to), <-errs
}

// scaleCost measures the claim cost and Stats' time with pending tasks scheduled, none due.
func scaleCost(ctx context.Context, cfg ScaleConfig, q *durable.Queue, pending int) (ScaleClaim, error) {
	c := ScaleClaim{Pending: pending}
	st, lim := q.Store(), q.Limits()
	times := make([]time.Duration, cfg.ClaimCalls)
	for i := range times {
		if cfg.Overdue {
			break
		}
		start := time.Now()
		got, err := st.Claim(ctx, 0, 32, time.Minute, lim)
		times[i] = time.Since(start)
		if err != nil {
			return c, fmt.Errorf("claim: %w", err)
		}
		if len(got.Tasks) != 0 {
			return c, fmt.Errorf("claim: leased %d tasks, none due", len(got.Tasks))
		}
	}
	if !cfg.Overdue {
		c.Claim = timing(times)
	}
	times = make([]time.Duration, cfg.StatsCalls)
	for i := range times {
		start := time.Now()
		s, err := q.Stats(ctx)
		times[i] = time.Since(start)
		if err != nil {
			return c, fmt.Errorf("stats: %w", err)
		}
		want := durable.ShardStats{Shard: -1, Scheduled: int64(pending), States: durable.StateCounts{Scheduled: int64(pending)}}
		if cfg.Overdue {
			want.Scheduled, want.Due = 0, int64(pending)
		}
		if t := s.Total; t.Scheduled != want.Scheduled || t.Due != want.Due || t.States != want.States ||
			t.InFlight != 0 || t.Dead != 0 || t.Retained != 0 {
			return c, fmt.Errorf("stats: %+v, want %+v", t, want)
		}
	}
	c.Stats = timing(times)
	return c, nil
}

func timing(times []time.Duration) ScaleTiming {
	s := slices.Sorted(slices.Values(times))
	return ScaleTiming{Calls: len(s), Median: s[len(s)/2], Max: s[len(s)-1]}
}

// scaleWorker is a Queue's Run handling the probes and the churn's tasks.
type scaleWorker struct {
	q       *durable.Queue
	cancel  context.CancelFunc
	done    chan error
	mu      sync.Mutex
	ran     map[string]int  // how often each probe or churn task ran
	late    []time.Duration // the current window's probes' lateness
	probes  int             // probes added, over both windows
	churned atomic.Int64    // churn tasks run
	stopped bool
	err     error
}

func newScaleWorker(ctx context.Context, q *durable.Queue) *scaleWorker {
	ctx, cancel := context.WithCancel(ctx)
	w := &scaleWorker{q: q, cancel: cancel, done: make(chan error, 1), ran: map[string]int{}}
	go func() {
		w.done <- q.Run(ctx, func(_ context.Context, t durable.Task) error {
			due, err := payloadDue(t.Payload)
			if err != nil {
				return durable.Permanent(err)
			}
			late := time.Since(due)
			w.mu.Lock()
			w.ran[t.Key]++
			if t.Key[0] == 'p' {
				w.late = append(w.late, late)
			}
			w.mu.Unlock()
			if t.Key[0] == 'c' {
				w.churned.Add(1)
			}
			return nil
		})
	}()
	return w
}

func (w *scaleWorker) stop() error {
	if !w.stopped {
		w.stopped = true
		w.cancel()
		if err := <-w.done; err != nil && !errors.Is(err, context.Canceled) {
			w.err = fmt.Errorf("worker: %w", err)
		}
	}
	return w.err
}

// probe adds a probe every cfg.ProbeEvery for cfg.Window, each due 200 ms after its add, and
// returns their lateness once all have run.
func (w *scaleWorker) probe(ctx context.Context, cfg ScaleConfig, payload []byte) (ScaleLateness, error) {
	w.mu.Lock()
	w.late = nil
	w.mu.Unlock()
	start := time.Now()
	n := 0
	for next := start; time.Since(start) < cfg.Window; next = next.Add(cfg.ProbeEvery) {
		time.Sleep(time.Until(next))
		due := time.Now().Add(200 * time.Millisecond)
		key := "probe-" + strconv.Itoa(w.probes)
		added, err := w.q.Add(ctx, key, withDue(payload, due), due)
		if err != nil || !added {
			return ScaleLateness{}, fmt.Errorf("probe %s: added %v, %v", key, added, err)
		}
		w.probes++
		n++
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		w.mu.Lock()
		got := len(w.late)
		w.mu.Unlock()
		if got >= n {
			break
		}
		if time.Now().After(deadline) {
			return ScaleLateness{}, fmt.Errorf("%d of %d probes ran within 30 s of the window", got, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
	w.mu.Lock()
	late := slices.Sorted(slices.Values(w.late))
	w.mu.Unlock()
	l := ScaleLateness{Probes: len(late), P50: quantile(late, 0.5), P99: quantile(late, 0.99), Max: late[len(late)-1]}
	l.Early, _ = slices.BinarySearch(late, 0)
	return l, nil
}

// churn adds cfg.Churn tasks due now, in batches, and returns their rate from the first add
// until the store holds none of them (each settled) but the backlog.
func (w *scaleWorker) churn(ctx context.Context, cfg ScaleConfig, payload []byte) (float64, error) {
	start := time.Now()
	items := make([]durable.Item, 0, cfg.Batch)
	for i := range cfg.Churn {
		now := time.Now()
		items = append(items, durable.Item{Key: "churn-" + strconv.Itoa(i), Payload: withDue(payload, now), At: now})
		if len(items) == cap(items) || i == cfg.Churn-1 {
			if _, err := w.q.AddBatch(ctx, items); err != nil {
				return 0, err
			}
			items = items[:0]
		}
	}
	deadline := time.Now().Add(time.Duration(cfg.Churn)*time.Millisecond + time.Minute)
	for {
		if w.churned.Load() >= int64(cfg.Churn) {
			s, err := w.q.Stats(ctx)
			if err != nil {
				return 0, err
			}
			if t := s.Total; t.Due == 0 && t.InFlight == 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("%d of %d churn tasks ran by the deadline", w.churned.Load(), cfg.Churn)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return float64(cfg.Churn) / time.Since(start).Seconds(), nil
}

// check: every probe and churn task ran exactly once, and nothing else ran.
func (w *scaleWorker) check(churn int) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.ran) != w.probes+churn {
		return fmt.Errorf("%d distinct tasks ran, want %d probes and %d churned", len(w.ran), w.probes, churn)
	}
	for k, n := range w.ran {
		if n != 1 {
			return fmt.Errorf("task %s ran %d times", k, n)
		}
	}
	return nil
}
