package sqlbench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/pgwheel"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The churn measurement: how pgwheel's claims and settles fare while dead row versions pile up
// in pgwheel_task, and whether autovacuum cures them with no manual VACUUM. It compares the
// table's storage parameters as the migrations set them ("migrated") with the server's defaults
// ("defaults", the parameters RESET), in interleaved rounds on one PostgreSQL database.
//
// One round of one variant:
//
//  1. Setup: the table's parameters set for the variant, and a VACUUM ANALYZE (the only manual
//     one: every variant starts from a clean table).
//  2. Emptied: Empty tasks pushed through a fresh namespace, the table's only one, then
//     ANALYZE, as autoanalyze would; the settle of 32 done tasks timed before the burst
//     (fresh), right after the ANALYZE, and every second for Window, until within 2× of fresh;
//     the claim cost before the burst and right after the ANALYZE.
//  3. Before: Backlog tasks added, due in a day, in another namespace, and ANALYZE; the claim
//     cost (see ChurnCost) on it.
//  4. Churn: a durable.Queue's worker (Concurrency slots) runs Churn tasks added already due,
//     until every one has run and been settled.
//  5. Window: for Window after the churn, with the worker still running, a probe task due 200 ms
//     after its add every ProbeEvery (its lateness is its handler's start minus that due time),
//     and the claim cost read every second. Recovered is the time from the churn's end until the
//     claim scan's buffers were within 2× of before.
//
// Both namespaces are deleted at the end of the round.

// ChurnConfig describes a churn measurement.
type ChurnConfig struct {
	DSN         string        // the PostgreSQL database, migrated by Churn
	Rounds      int           // interleaved rounds, each running every variant
	Backlog     int           // tasks pending through the round, due in a day
	Churn       int           // tasks pushed through after the backlog is there
	Empty       int           // tasks pushed through the emptied namespace
	Concurrency int           // the worker's handler slots
	Window      time.Duration // how long the probes run after the churn (and after the emptying)
	ProbeEvery  time.Duration // a probe task is added this often during the window
	// Variants, if not empty, keeps only these ("migrated", "defaults").
	Variants []string
	// Progress, if set, receives a line on each phase.
	Progress func(string)
}

// ChurnCost is one reading of the claim cost: Buffers is the shared buffers (hit or read) that
// the claim's scan for due tasks touched (EXPLAIN ANALYZE of it, a machine-independent figure:
// one buffer per index or heap page, dead entries' pages included); Claim is the median time of
// five Store.Claim calls of limit 0 (its clock, pause and reap statement, and its search for the
// next due time, which walks the same entries).
type ChurnCost struct {
	Buffers int64         `json:"buffers"`
	Claim   time.Duration `json:"claim_ns"`
}

// ChurnResult is one variant's figures in one round.
type ChurnResult struct {
	Round   int    `json:"round"`
	Variant string `json:"variant"`
	Backlog int    `json:"backlog"`
	Churn   int    `json:"churn"`
	// ChurnPerSec is the churn's tasks over its duration, from the worker's start until the last
	// was settled.
	ChurnPerSec float64   `json:"churn_per_sec"`
	Before      ChurnCost `json:"before"`
	After       ChurnCost `json:"after"` // right after the churn
	End         ChurnCost `json:"end"`   // at the window's end
	// Recovered is when, after the churn, the claim scan's buffers were first within 2× of
	// Before's; -1 when not within the window.
	Recovered time.Duration `json:"recovered_ns"`
	// Lateness of the probes over the window.
	Probes      int           `json:"probes"`
	LatenessP50 time.Duration `json:"lateness_p50_ns"`
	LatenessP99 time.Duration `json:"lateness_p99_ns"`
	LatenessMax time.Duration `json:"lateness_max_ns"`
	Early       int           `json:"early"`
	// Autovacuums of pgwheel_task during the churn and the window.
	Autovacuums int `json:"autovacuums"`
	// The emptied namespace: the settle of 32 done tasks.
	FreshClaim       ChurnCost     `json:"fresh_claim"`   // the claim cost before the burst
	EmptiedClaim     ChurnCost     `json:"emptied_claim"` // and right after it and the ANALYZE
	FreshSettle      time.Duration `json:"fresh_settle_ns"`
	EmptiedSettle    time.Duration `json:"emptied_settle_ns"` // right after the burst and ANALYZE
	EmptiedRecovered time.Duration `json:"emptied_recovered_ns"`
	Err              string        `json:"err,omitempty"`
}

// churnVariants are the storage parameters compared: the migrations' and the server's defaults.
var churnVariants = []string{"migrated", "defaults"}

// Churn runs cfg's rounds, each variant once per round in an order that turns each round.
func Churn(ctx context.Context, cfg ChurnConfig) ([]ChurnResult, error) {
	if cfg.Rounds <= 0 || cfg.Backlog < 0 || cfg.Churn <= 0 || cfg.Empty <= 0 || cfg.Concurrency <= 0 ||
		cfg.Window <= 0 || cfg.ProbeEvery <= 0 || cfg.DSN == "" {
		return nil, fmt.Errorf("sqlbench: incomplete churn config %+v", cfg)
	}
	if cfg.Progress == nil {
		cfg.Progress = func(string) {}
	}
	pc, err := pgxpool.ParseConfig(cfg.DSN)
	if err != nil {
		return nil, err
	}
	pc.MaxConns = int32(cfg.Concurrency/4 + 16)
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	// One measurement at a time: each sets the table's parameters.
	lock, err := pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	defer lock.Release()
	var alone bool
	if err := lock.QueryRow(ctx, `SELECT pg_try_advisory_lock($1)`, churnLock).Scan(&alone); err != nil {
		return nil, err
	}
	if !alone {
		return nil, errors.New("sqlbench: another churn measurement runs on this database")
	}
	defer lock.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock($1)`, churnLock) //nolint:errcheck
	if err := pgwheel.Migrate(ctx, pool); err != nil {
		return nil, err
	}
	migrated, err := migratedParams(ctx, cfg.DSN)
	if err != nil {
		return nil, err
	}
	defer func() { // leave the table as the migrations made it
		setParams(context.WithoutCancel(ctx), pool, "migrated", migrated) //nolint:errcheck
	}()
	variants := slices.DeleteFunc(slices.Clone(churnVariants), func(v string) bool {
		return len(cfg.Variants) > 0 && !slices.Contains(cfg.Variants, v)
	})
	run := strconv.FormatInt(time.Now().UnixNano(), 36)
	var out []ChurnResult
	for round := range cfg.Rounds {
		for i := range variants {
			v := variants[(i+round)%len(variants)]
			if err := ctx.Err(); err != nil {
				return out, err
			}
			r := churnRound(ctx, cfg, pool, v, migrated, fmt.Sprintf("churn-%s-r%d-%s", run, round+1, v))
			r.Round = round + 1
			out = append(out, r)
			b, _ := json.Marshal(r)
			cfg.Progress(string(b))
		}
	}
	return out, nil
}

// churnLock is the advisory lock a churn measurement holds ("churn" in ASCII).
const churnLock = 0x636875726e

// migratedParams returns pgwheel_task's storage parameters as the migrations
// set them, read in a scratch schema migrated for the purpose (the
// database's own table may hold a variant's).
func migratedParams(ctx context.Context, dsn string) (string, error) {
	cc, err := pgx.ParseConfig(dsn)
	if err != nil {
		return "", err
	}
	schema := "sqlchurn_ref_" + strconv.FormatInt(time.Now().UnixNano(), 36)
	cc.RuntimeParams["search_path"] = schema
	conn, err := pgx.ConnectConfig(ctx, cc)
	if err != nil {
		return "", err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	if _, err := conn.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		return "", err
	}
	defer conn.Exec(context.WithoutCancel(ctx), `DROP SCHEMA `+schema+` CASCADE`) //nolint:errcheck
	if err := pgwheel.Migrate(ctx, conn); err != nil {
		return "", err
	}
	var params string
	err = conn.QueryRow(ctx, `SELECT coalesce(array_to_string(reloptions, ', '), '')
		FROM pg_class WHERE oid = $1::regclass`, schema+".pgwheel_task").Scan(&params)
	if err == nil && params == "" {
		err = errors.New("the migrations set no storage parameter on pgwheel_task")
	}
	return params, err
}

// setParams gives pgwheel_task the variant's storage parameters.
func setParams(ctx context.Context, pool *pgxpool.Pool, variant, migrated string) error {
	if _, err := pool.Exec(ctx, `ALTER TABLE pgwheel_task RESET (autovacuum_vacuum_scale_factor,
		autovacuum_vacuum_threshold, autovacuum_vacuum_insert_scale_factor, autovacuum_vacuum_insert_threshold,
		autovacuum_analyze_scale_factor, autovacuum_analyze_threshold, fillfactor)`); err != nil {
		return err
	}
	if variant == "migrated" && migrated != "" {
		_, err := pool.Exec(ctx, `ALTER TABLE pgwheel_task SET (`+migrated+`)`)
		return err
	}
	return nil
}

func churnRound(ctx context.Context, cfg ChurnConfig, pool *pgxpool.Pool, variant, migrated, ns string) ChurnResult {
	r := ChurnResult{Variant: variant, Backlog: cfg.Backlog, Churn: cfg.Churn, Recovered: -1, EmptiedRecovered: -1}
	err := func() error {
		defer func() {
			ctx := context.WithoutCancel(ctx)
			pool.Exec(ctx, `DELETE FROM pgwheel_task WHERE namespace IN ($1, $2)`, ns, ns+"-empty") //nolint:errcheck
		}()
		if err := setParams(ctx, pool, variant, migrated); err != nil {
			return err
		}
		if _, err := pool.Exec(ctx, `VACUUM ANALYZE pgwheel_task`); err != nil {
			return err
		}
		cfg.Progress(fmt.Sprintf("%s: emptying %d", ns, cfg.Empty))
		if err := emptied(ctx, cfg, pool, ns+"-empty", &r); err != nil {
			return err
		}
		st, err := pgwheel.New(pool, ns)
		if err != nil {
			return err
		}
		cfg.Progress(fmt.Sprintf("%s: adding the backlog of %d", ns, cfg.Backlog))
		if err := addBacklog(ctx, st, cfg.Backlog); err != nil {
			return fmt.Errorf("backlog: %w", err)
		}
		// Statistics of the table with its backlog, as autoanalyze takes them (within a round
		// of autovacuum with the migrations' parameters): on those of the emptied namespace
		// the planner may read the whole backlog for a claim (see claim.go's nextDueSQL).
		if _, err := pool.Exec(ctx, `ANALYZE pgwheel_task`); err != nil {
			return err
		}
		if r.Before, err = churnCost(ctx, pool, st); err != nil {
			return err
		}
		vacuums0, err := autovacuums(ctx, pool)
		if err != nil {
			return err
		}
		cfg.Progress(fmt.Sprintf("%s: churning %d", ns, cfg.Churn))
		if err := churnAndProbe(ctx, cfg, pool, st, &r); err != nil {
			return err
		}
		vacuums1, err := autovacuums(ctx, pool)
		if err != nil {
			return err
		}
		r.Autovacuums = vacuums1 - vacuums0
		return nil
	}()
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

// addBacklog adds n tasks due in a day, in batches of 512.
func addBacklog(ctx context.Context, st *pgwheel.Store, n int) error {
	q, err := durable.New(st, durable.Options{})
	if err != nil {
		return err
	}
	due := time.Now().Add(24 * time.Hour)
	const batch = 512
	for lo := 0; lo < n; lo += batch {
		items := make([]durable.Item, 0, batch)
		for i := lo; i < min(lo+batch, n); i++ {
			items = append(items, durable.Item{Key: "backlog-" + strconv.Itoa(i), At: due})
		}
		added, err := q.AddBatch(ctx, items)
		if err != nil {
			return err
		}
		for i, ok := range added {
			if !ok {
				return fmt.Errorf("backlog task %s was not added", items[i].Key)
			}
		}
	}
	return nil
}

// churnCost reads the claim cost of st's namespace (see ChurnCost).
func churnCost(ctx context.Context, pool *pgxpool.Pool, st *pgwheel.Store) (ChurnCost, error) {
	var c ChurnCost
	var plan []byte
	// The claim's scan for due tasks (claim.go's lease), without its locks.
	if err := pool.QueryRow(ctx, `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON)
		SELECT key FROM pgwheel_task WHERE namespace = $1 AND place = 'due' AND at <= now()
		ORDER BY at, key LIMIT 32`, st.Namespace()).Scan(&plan); err != nil {
		return c, fmt.Errorf("explain: %w", err)
	}
	var p []struct {
		Plan struct {
			Hit  int64 `json:"Shared Hit Blocks"`
			Read int64 `json:"Shared Read Blocks"`
		}
	}
	if err := json.Unmarshal(plan, &p); err != nil || len(p) != 1 {
		return c, fmt.Errorf("explain: %s: %v", plan, err)
	}
	c.Buffers = p[0].Plan.Hit + p[0].Plan.Read
	times := make([]time.Duration, 5)
	for i := range times {
		start := time.Now()
		if _, err := st.Claim(ctx, 0, 0, time.Minute, durable.Limits{MaxAttempts: 3}); err != nil {
			return c, fmt.Errorf("claim: %w", err)
		}
		times[i] = time.Since(start)
	}
	slices.Sort(times)
	c.Claim = times[len(times)/2]
	return c, nil
}

// autovacuums is how many times autovacuum vacuumed pgwheel_task (the statistics collector's
// count, which lags by up to its flush interval).
func autovacuums(ctx context.Context, pool *pgxpool.Pool) (int, error) {
	var n int
	err := pool.QueryRow(ctx, `SELECT autovacuum_count FROM pg_stat_user_tables
		WHERE relid = 'pgwheel_task'::regclass`).Scan(&n)
	return n, err
}

// churnAndProbe runs the churn and the window (steps 4 and 5) with one worker.
func churnAndProbe(ctx context.Context, cfg ChurnConfig, pool *pgxpool.Pool, st *pgwheel.Store, r *ChurnResult) error {
	q, err := durable.New(st, durable.Options{Concurrency: cfg.Concurrency})
	if err != nil {
		return err
	}
	var churned atomic.Int64
	allChurned := make(chan struct{})
	var mu sync.Mutex
	var lateness []time.Duration
	probes := map[string]int{}
	handler := func(_ context.Context, t durable.Task) error {
		if len(t.Payload) == 0 { // a churn task
			if churned.Add(1) == int64(cfg.Churn) {
				close(allChurned)
			}
			return nil
		}
		due, err := decodeDue(t.Payload)
		if err != nil {
			return durable.Permanent(err)
		}
		late := time.Since(due)
		mu.Lock()
		lateness = append(lateness, late)
		probes[t.Key]++
		mu.Unlock()
		return nil
	}
	// The churn's tasks are all added before the worker starts: the churn is the worker's pace.
	items := make([]durable.Item, 0, 512)
	for i := range cfg.Churn {
		items = append(items, durable.Item{Key: "churn-" + strconv.Itoa(i), At: time.Now()})
		if len(items) == cap(items) || i == cfg.Churn-1 {
			if _, err := q.AddBatch(ctx, items); err != nil {
				return err
			}
			items = items[:0]
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- q.Run(runCtx, handler) }()
	stopped := false
	stopRun := func() error {
		if stopped {
			return nil
		}
		stopped = true
		stop()
		return <-done
	}
	defer stopRun() //nolint:errcheck
	select {
	case <-allChurned:
	case err := <-done:
		stopped = true
		return fmt.Errorf("worker stopped during the churn: %v", err)
	case <-ctx.Done():
		return ctx.Err()
	}
	// The last task's handler returned; its settle follows: wait for the namespace to hold only
	// the backlog, so the window starts with the churn's writes committed.
	for {
		var busy bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pgwheel_task WHERE namespace = $1
			AND (place = 'lease' OR place = 'due' AND at <= now()))`, st.Namespace()).Scan(&busy); err != nil {
			return err
		}
		if !busy {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	churnEnd := time.Now()
	r.ChurnPerSec = float64(cfg.Churn) / churnEnd.Sub(start).Seconds()
	if r.After, err = churnCost(ctx, pool, st); err != nil {
		return err
	}
	if r.After.Buffers <= 2*r.Before.Buffers {
		r.Recovered = 0
	}
	nextProbe, nextCost := time.Now(), time.Now().Add(time.Second)
	added := 0
	for time.Since(churnEnd) < cfg.Window {
		now := time.Now()
		if !now.Before(nextProbe) {
			due := now.Add(200 * time.Millisecond)
			if _, err := q.Add(ctx, "probe-"+strconv.Itoa(added), encodeDue(due), due); err != nil {
				return err
			}
			added++
			nextProbe = nextProbe.Add(cfg.ProbeEvery)
		}
		if !now.Before(nextCost) {
			c, err := churnCost(ctx, pool, st)
			if err != nil {
				return err
			}
			r.End = c
			if r.Recovered < 0 && c.Buffers <= 2*r.Before.Buffers {
				r.Recovered = time.Since(churnEnd)
			}
			nextCost = nextCost.Add(time.Second)
		}
		time.Sleep(min(time.Until(nextProbe), time.Until(nextCost), 10*time.Millisecond))
	}
	// Every probe is due within 200 ms of its add.
	deadline := time.Now().Add(30 * time.Second)
	for {
		mu.Lock()
		n := len(probes)
		mu.Unlock()
		if n == added || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := stopRun(); err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("worker: %w", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(probes) != added {
		return fmt.Errorf("%d of %d probes ran", len(probes), added)
	}
	for k, n := range probes {
		if n != 1 {
			return fmt.Errorf("probe %s ran %d times", k, n)
		}
	}
	if got := churned.Load(); got != int64(cfg.Churn) {
		return fmt.Errorf("%d churn tasks ran, want %d", got, cfg.Churn)
	}
	slices.Sort(lateness)
	r.Probes = len(lateness)
	for _, l := range lateness {
		if l < 0 {
			r.Early++
		}
	}
	r.LatenessP50, r.LatenessP99, r.LatenessMax = quantile(lateness, 0.5), quantile(lateness, 0.99), lateness[len(lateness)-1]
	return nil
}

// emptied runs step 2 on namespace ns.
func emptied(ctx context.Context, cfg ChurnConfig, pool *pgxpool.Pool, ns string, r *ChurnResult) error {
	st, err := pgwheel.New(pool, ns)
	if err != nil {
		return err
	}
	q, err := durable.New(st, durable.Options{Concurrency: cfg.Concurrency})
	if err != nil {
		return err
	}
	if r.FreshSettle, err = settleCost(ctx, q); err != nil {
		return err
	}
	if r.FreshClaim, err = churnCost(ctx, pool, st); err != nil {
		return err
	}
	var ran atomic.Int64
	all := make(chan struct{})
	items := make([]durable.Item, 0, 512)
	for i := range cfg.Empty {
		items = append(items, durable.Item{Key: "empty-" + strconv.Itoa(i), At: time.Now()})
		if len(items) == cap(items) || i == cfg.Empty-1 {
			if _, err := q.AddBatch(ctx, items); err != nil {
				return err
			}
			items = items[:0]
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- q.Run(runCtx, func(context.Context, durable.Task) error {
			if ran.Add(1) == int64(cfg.Empty) {
				close(all)
			}
			return nil
		})
	}()
	select {
	case <-all:
	case err := <-done:
		stop()
		return fmt.Errorf("worker stopped: %v", err)
	case <-ctx.Done():
	}
	stop()
	if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	for { // the last settles commit after their handlers return
		var left bool
		if err := pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pgwheel_task WHERE namespace = $1
			AND place = 'lease')`, ns).Scan(&left); err != nil {
			return err
		}
		if !left {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := pool.Exec(ctx, `ANALYZE pgwheel_task`); err != nil {
		return err
	}
	if r.EmptiedClaim, err = churnCost(ctx, pool, st); err != nil {
		return err
	}
	if r.EmptiedSettle, err = settleCost(ctx, q); err != nil {
		return err
	}
	emptiedAt := time.Now()
	for d := r.EmptiedSettle; ; {
		if d <= 2*r.FreshSettle {
			r.EmptiedRecovered = time.Since(emptiedAt)
			return nil
		}
		if time.Since(emptiedAt) >= cfg.Window {
			return nil
		}
		time.Sleep(time.Second)
		if d, err = settleCost(ctx, q); err != nil {
			return err
		}
	}
}

// settleCost is the median time of three Store.Settle calls, each settling as done 32 tasks
// just added due and claimed, with the Queue's limits.
func settleCost(ctx context.Context, q *durable.Queue) (time.Duration, error) {
	st, lim := q.Store(), q.Limits()
	times := make([]time.Duration, 3)
	for i := range times {
		items := make([]durable.Item, 32)
		for j := range items {
			items[j] = durable.Item{Key: fmt.Sprintf("settle-%d-%d", time.Now().UnixNano(), j), At: time.Now()}
		}
		if _, err := q.AddBatch(ctx, items); err != nil {
			return 0, err
		}
		c, err := st.Claim(ctx, 0, len(items), time.Minute, lim)
		if err != nil {
			return 0, err
		}
		if len(c.Tasks) != len(items) {
			return 0, fmt.Errorf("claimed %d of %d", len(c.Tasks), len(items))
		}
		outcomes := make([]durable.Outcome, len(c.Tasks))
		for j, t := range c.Tasks {
			outcomes[j] = durable.Outcome{Key: t.Key, Token: t.Token, Kind: durable.OutcomeDone}
		}
		start := time.Now()
		s, err := st.Settle(ctx, 0, lim, outcomes)
		if err != nil {
			return 0, err
		}
		times[i] = time.Since(start)
		for j, code := range s.Codes {
			if code != durable.SettleDone {
				return 0, fmt.Errorf("settle of %s: code %v", outcomes[j].Key, code)
			}
		}
	}
	slices.Sort(times)
	return times[1], nil
}
