package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/redis/go-redis/v9"
)

// The overview shows the counts Queue.Stats reports, in total and per
// partition, on a standalone server, a cluster and SQLite.
func TestOverviewShowsStats(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c redis.UniversalClient) {
		q := newQueue(t, c)
		fixture(t, q, []string{"d1", "d2", "d3", hostileKey}, []string{"ok1", "ok2"}, 5, 7)
		h := newDashboard(t, q)

		before := stats(t, q)
		r := get(t, h, "/ui/", true)
		after := stats(t, q)
		if r.status != http.StatusOK {
			t.Fatalf("GET /ui/: %d %s", r.status, r.body)
		}
		cells := cellsByID(r.body)

		// Nothing runs, so the counts hold still; only the lateness grows.
		if before.Total.Due != after.Total.Due || before.Total.Dead != after.Total.Dead {
			t.Fatalf("Stats moved during the test: %+v then %+v", before.Total, after.Total)
		}
		want := map[string]int64{"due": 5, "scheduled": 7, "inflight": 0, "dead": 4, "retained": 2}
		checkCounts(t, cells, "total", after.Total, want)
		// Per state, as the lists count: the due and the later ones are all
		// scheduled (never delivered).
		wantStates := rediswheel.StateCounts{Scheduled: 12, Dead: 4, Done: 2}
		if after.Total.States != wantStates {
			t.Errorf("Stats per state %+v, the fixture made %+v", after.Total.States, wantStates)
		}
		for _, s := range states {
			id := "state-" + stateSlug(s)
			if got, err := strconv.ParseInt(cells[id], 10, 64); err != nil || got != wantStates.Of(s) {
				t.Errorf("%s on the page: %q, Stats says %d", id, cells[id], wantStates.Of(s))
			}
		}
		for _, s := range after.Shards {
			checkCounts(t, cells, fmt.Sprintf("s%d", s.Shard), s, nil)
		}
		parts := q.Store().Partitions() // 8 on Redis here, 1 on SQLite
		if len(after.Shards) != parts || cells[fmt.Sprintf("s%d-due", parts-1)] == "" || cells[fmt.Sprintf("s%d-due", parts)] != "" {
			t.Errorf("want exactly shards 0-%d on the page; cells %v", parts-1, cells)
		}

		// Lateness: the due tasks were due an hour ago.
		late, err := time.ParseDuration(cells["total-late"])
		if err != nil || late < before.Total.OldestDue.Round(time.Millisecond) || late > after.Total.OldestDue.Round(time.Millisecond) {
			t.Errorf("lateness on the page %q (%v), want between Stats' %v and %v", cells["total-late"], err,
				before.Total.OldestDue, after.Total.OldestDue)
		}
		if late < time.Hour {
			t.Errorf("lateness %v: the fixture's due tasks were due an hour ago", late)
		}
		if got := cells["paused"]; got != "Claims are running on every shard." {
			t.Errorf("paused line %q", got)
		}

		if err := q.Pause(context.Background()); err != nil {
			t.Fatal(err)
		}
		if cells := cellsByID(get(t, h, "/ui/", true).body); cells["paused"] == "Claims are running on every shard." {
			t.Errorf("after Pause the page says %q", cells["paused"])
		}
	})
}

// checkCounts checks the five count cells with id prefix-<name> against s,
// and against want where it names them.
func checkCounts(t *testing.T, cells map[string]string, prefix string, s rediswheel.ShardStats, want map[string]int64) {
	t.Helper()
	for name, n := range map[string]int64{"due": s.Due, "scheduled": s.Scheduled, "inflight": s.InFlight, "dead": s.Dead, "retained": s.Retained} {
		id := prefix + "-" + name
		got, err := strconv.ParseInt(cells[id], 10, 64)
		if err != nil || got != n {
			t.Errorf("%s on the page: %q, Stats says %d", id, cells[id], n)
		}
		if w, ok := want[name]; ok && n != w {
			t.Errorf("Stats %s = %d, the fixture made %d", id, n, w)
		}
	}
}

func stats(t testing.TB, q *rediswheel.Queue) rediswheel.Stats {
	t.Helper()
	st, err := q.Stats(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

var cellRE = regexp.MustCompile(`id="([A-Za-z0-9_-]+)"[^>]*>(?:<a [^>]*>|<b>|<span [^>]*>)?([^<]*)`)

// cellsByID maps each element id of an HTML page to the text that starts
// the element (past a link, bold or span around it).
func cellsByID(body string) map[string]string {
	m := map[string]string{}
	for _, s := range cellRE.FindAllStringSubmatch(body, -1) {
		m[s[1]] = s[2]
	}
	return m
}
