package sqlbench

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.Cleanup(func(int) { removeTimerd() }))
}

// tiny is a run of every workload small enough for make test.
func tiny() Config {
	return Config{
		Rounds: 1, Tasks: 60, LatenessTasks: 20, Spread: 200 * time.Millisecond,
		Producers: 4, Concurrency: 8, Batch: 16,
	}
}

// checkRun runs cfg and checks that each of want measured every workload it runs, without error
// (Run fails a measurement unless each task ran exactly once and the store held what was
// added), with a positive rate and no early handler.
func checkRun(t *testing.T, cfg Config, want []string) {
	t.Helper()
	results, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]Workload{}
	for _, r := range results {
		t.Logf("%+v", r)
		got[r.System] = append(got[r.System], r.Workload)
		switch {
		case r.Err != "":
			t.Errorf("%s %s: %s", r.System, r.Workload, r.Err)
		case r.Workload == Lateness && (r.LatenessMax <= 0 || r.LatenessP50 > r.LatenessP99 || r.LatenessP99 > r.LatenessMax):
			t.Errorf("%s: implausible lateness %+v", r.System, r)
		case r.Workload != Lateness && r.PerSec <= 0:
			t.Errorf("%s %s: rate %v", r.System, r.Workload, r.PerSec)
		}
		if r.Early != 0 {
			t.Errorf("%s: %d tasks ran early", r.System, r.Early)
		}
	}
	for _, name := range want {
		w := Workloads
		if name == "river-tuned" {
			w = []Workload{Fires, Lateness}
		}
		if !slices.Equal(got[name], w) {
			t.Errorf("%s measured %v, want %v", name, got[name], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("systems measured: %v, want %v", got, want)
	}
}

func TestRunSQLite(t *testing.T) {
	cfg := tiny()
	cfg.SQLiteDir = t.TempDir()
	checkRun(t, cfg, []string{"sqlitewheel", "riversqlite"})
	if left, _ := os.ReadDir(cfg.SQLiteDir); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
}

// TestRunPostgres runs the PostgreSQL systems on PGWHEEL_DSN (scripts/postgres.sh up), in a
// River schema of its own.
func TestRunPostgres(t *testing.T) {
	dsn := os.Getenv("PGWHEEL_DSN")
	if dsn == "" {
		if os.Getenv("PGWHEEL_REQUIRE") == "1" {
			t.Fatal("PGWHEEL_REQUIRE=1 but PGWHEEL_DSN is empty")
		}
		t.Skip("needs PGWHEEL_DSN (scripts/postgres.sh up)")
	}
	cfg := tiny()
	cfg.PostgresDSN = dsn
	cfg.RiverSchema = "sqlbench_test_river"
	checkRun(t, cfg, []string{"pgwheel", "river", "river-tuned"})
}

// TestRecorderCheck: a run fails when a task ran twice, not at all, or one that was not added ran.
func TestRecorderCheck(t *testing.T) {
	due := time.Now()
	for _, tc := range []struct {
		name string
		keys []string
		want string
	}{
		{"each once", []string{"t-0", "t-1", "t-2"}, ""},
		{"twice", []string{"t-0", "t-1", "t-2", "t-1"}, "task t-1 ran 2 times"},
		{"missing", []string{"t-0", "t-2"}, "task t-1 ran 0 times"},
		{"stranger", []string{"t-0", "t-1", "t-2", "u-0"}, "4 distinct tasks ran, want 3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newRecorder(3)
			for _, k := range tc.keys {
				r.handle(k, due)
			}
			err := r.check("t", 3)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Errorf("check: %v, want %q", err, tc.want)
			}
		})
	}
}

func TestQuantileAndRatios(t *testing.T) {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	sorted := []time.Duration{ms(1), ms(2), ms(3), ms(4), ms(100)}
	if got := quantile(sorted, 0.5); got != ms(3) {
		t.Errorf("p50 %v, want 3ms", got)
	}
	if got := quantile(sorted, 0.99); got != ms(100) {
		t.Errorf("p99 %v, want 100ms", got)
	}
	results := []Result{
		{Round: 1, System: "a", Workload: Fires, PerSec: 200},
		{Round: 1, System: "b", Workload: Fires, PerSec: 100},
		{Round: 2, System: "b", Workload: Fires, PerSec: 100},
		{Round: 2, System: "a", Workload: Fires, PerSec: 50},
		{Round: 3, System: "a", Workload: Fires, PerSec: 300},
		{Round: 3, System: "b", Workload: Fires, Err: "failed"},
	}
	if got := Ratios(results, "a", "b", Fires); !slices.Equal(got, []float64{2, 0.5}) {
		t.Errorf("ratios %v, want [2 0.5] (round 3 failed)", got)
	}
	if got := Median([]float64{3, 1, 2, 10}); got != 2.5 {
		t.Errorf("median %v, want 2.5", got)
	}
	s := Summarize(results)
	if len(s) != 2 || s[0].System != "a" || s[0].Fires != 200 || s[1].Fires != 0 || len(s[1].Errs) != 1 {
		t.Errorf("summaries %+v", s)
	}
}

// TestChurnPostgres runs the churn measurement small on PGWHEEL_DSN and checks that each variant
// measured what it names: every churn task and every probe ran once (Churn fails otherwise), the
// claim scan touched buffers, the settles were timed, no probe ran early.
func TestChurnPostgres(t *testing.T) {
	dsn := os.Getenv("PGWHEEL_DSN")
	if dsn == "" {
		if os.Getenv("PGWHEEL_REQUIRE") == "1" {
			t.Fatal("PGWHEEL_REQUIRE=1 but PGWHEEL_DSN is empty")
		}
		t.Skip("needs PGWHEEL_DSN (scripts/postgres.sh up)")
	}
	results, err := Churn(context.Background(), ChurnConfig{
		DSN: dsn, Rounds: 1, Backlog: 2000, Churn: 500, Empty: 300, Concurrency: 16,
		Window: 2 * time.Second, ProbeEvery: 50 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	var variants []string
	for _, r := range results {
		t.Logf("%+v", r)
		variants = append(variants, r.Variant)
		switch {
		case r.Err != "":
			t.Errorf("%s: %s", r.Variant, r.Err)
		case r.Before.Buffers <= 0 || r.After.Buffers <= 0 || r.End.Buffers <= 0:
			t.Errorf("%s: claim scans touched no buffer: %+v", r.Variant, r)
		case r.Before.Claim <= 0 || r.FreshSettle <= 0 || r.EmptiedSettle <= 0 || r.ChurnPerSec <= 0 ||
			r.FreshClaim.Buffers <= 0 || r.EmptiedClaim.Buffers <= 0:
			t.Errorf("%s: a figure was not measured: %+v", r.Variant, r)
		case r.Probes < 10 || r.LatenessP50 > r.LatenessP99 || r.LatenessP99 > r.LatenessMax:
			t.Errorf("%s: implausible probes %+v", r.Variant, r)
		case r.Early != 0:
			t.Errorf("%s: %d probes ran early", r.Variant, r.Early)
		}
	}
	if !slices.Equal(variants, churnVariants) {
		t.Errorf("variants measured %v, want %v", variants, churnVariants)
	}
}
