package sqlbench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// tinyScale is a scale run small enough for make test: a few seconds per store.
func tinyScale(t *testing.T, store string) ScaleConfig {
	return ScaleConfig{
		Stores: []string{store}, Tasks: 600, OverviewAt: 200, Batch: 50, Producers: 2, PayloadBytes: 128,
		Offset: 6 * time.Hour, Horizon: time.Hour, Concurrency: 8, Churn: 100,
		Window: 300 * time.Millisecond, ProbeEvery: 20 * time.Millisecond, StatsCalls: 3, ClaimCalls: 3,
		Timerd: buildTimerd(t), Progress: func(s string) { t.Log(s) },
	}
}

// timerdBinary is timerd's binary, built once for the tests that need it (buildTimerd) and
// removed after them (removeTimerd, from TestMain).
var timerdBinary struct {
	once     sync.Once
	dir, bin string
	err      error
}

// buildTimerd builds timerd's binary, under the race detector if this test runs under it (the
// same flags reuse the packages this test's build compiled).
func buildTimerd(t *testing.T) string {
	t.Helper()
	b := &timerdBinary
	b.once.Do(func() {
		if b.dir, b.err = os.MkdirTemp("", "sqlbench-timerd-"); b.err != nil {
			return
		}
		b.bin = filepath.Join(b.dir, "timerd")
		args := []string{"build", "-o", b.bin}
		if raceEnabled {
			args = append(args, "-race")
		}
		cmd := exec.Command("go", append(args, "./cmd/timerd")...)
		cmd.Dir = filepath.Join("..", "..", "timerd")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("go build timerd: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.bin
}

func removeTimerd() {
	if timerdBinary.dir != "" {
		os.RemoveAll(timerdBinary.dir)
	}
}

// checkScale runs cfg on its one store and checks that every figure was measured.
func checkScale(t *testing.T, cfg ScaleConfig) {
	t.Helper()
	results, err := Scale(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if len(results) != 1 {
		t.Fatalf("%d results, want 1", len(results))
	}
	r := results[0]
	if r.Err != "" {
		t.Fatal(r.Err)
	}
	var stops []int
	for _, c := range r.Claims {
		stops = append(stops, c.Pending)
		if !cfg.Overdue && (c.Claim.Calls != cfg.ClaimCalls || c.Claim.Median <= 0) ||
			c.Stats.Calls != cfg.StatsCalls || c.Stats.Median <= 0 {
			t.Errorf("stop at %d: %+v", c.Pending, c)
		}
	}
	if want := []int{0, cfg.OverviewAt, cfg.Tasks}; !slices.Equal(stops, want) {
		t.Errorf("stops at %v, want %v", stops, want)
	}
	if o := r.Overview; o == nil || o.Pending != cfg.OverviewAt || o.Overview.Median <= 0 || o.APIStats.Median <= 0 {
		t.Errorf("overview %+v", o)
	}
	// A task holds at least its payload somewhere.
	if r.BytesPerTask < float64(cfg.PayloadBytes) {
		t.Errorf("%.0f bytes per task, less than its %d bytes of payload", r.BytesPerTask, cfg.PayloadBytes)
	}
	if cfg.Overdue {
		if r.ChurnPerSec != 0 || r.Lateness.Probes != 0 || r.AfterWindow != nil {
			t.Errorf("an overdue run ran its backlog: %+v", r)
		}
		return
	}
	if r.AfterChurn.Pending != cfg.Tasks || r.AfterChurn.Claim.Median <= 0 || r.AfterWindow == nil ||
		r.AfterWindow.Claim.Median <= 0 || r.ChurnPerSec <= 0 || r.AddsPerSec <= 0 {
		t.Errorf("implausible: %+v", r)
	}
	for _, l := range []ScaleLateness{r.Lateness, r.LatenessAfter} {
		if l.Probes == 0 || l.Early != 0 || l.P50 > l.P99 || l.P99 > l.Max {
			t.Errorf("lateness %+v", l)
		}
	}
}

func TestScaleSQLite(t *testing.T) {
	cfg := tinyScale(t, "sqlite")
	cfg.SQLiteDir = t.TempDir()
	checkScale(t, cfg)
	if left, _ := os.ReadDir(cfg.SQLiteDir); len(left) != 0 {
		t.Errorf("files left behind: %v", left)
	}
}

// TestScaleOverdueSQLite: with the backlog overdue, Stats and the overview count it as due, and
// nothing runs it.
func TestScaleOverdueSQLite(t *testing.T) {
	cfg := tinyScale(t, "sqlite")
	cfg.SQLiteDir, cfg.Overdue = t.TempDir(), true
	checkScale(t, cfg)
}

// TestScalePostgres runs on PGWHEEL_DSN (scripts/postgres.sh up), in a schema it drops.
func TestScalePostgres(t *testing.T) {
	dsn := os.Getenv("PGWHEEL_DSN")
	if dsn == "" {
		if os.Getenv("PGWHEEL_REQUIRE") == "1" {
			t.Fatal("PGWHEEL_REQUIRE=1 but PGWHEEL_DSN is empty")
		}
		t.Skip("needs PGWHEEL_DSN (scripts/postgres.sh up)")
	}
	cfg := tinyScale(t, "postgres")
	cfg.PostgresDSN = dsn
	checkScale(t, cfg)
}

// TestScaleRedisCluster runs on REDISWHEEL_CLUSTER_ADDRS (scripts/redis.sh up), in a namespace
// whose keys it deletes.
func TestScaleRedisCluster(t *testing.T) {
	addrs := os.Getenv("REDISWHEEL_CLUSTER_ADDRS")
	if addrs == "" {
		if os.Getenv("REDISWHEEL_REQUIRE") == "1" {
			t.Fatal("REDISWHEEL_REQUIRE=1 but REDISWHEEL_CLUSTER_ADDRS is empty")
		}
		t.Skip("needs REDISWHEEL_CLUSTER_ADDRS (scripts/redis.sh up)")
	}
	cfg := tinyScale(t, "redis-cluster")
	cfg.RedisClusterAddrs = strings.Split(addrs, ",")
	checkScale(t, cfg)
}
