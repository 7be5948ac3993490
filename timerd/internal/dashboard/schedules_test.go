package dashboard

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
)

// The schedules page lists the definitions with their next run; a
// schedule's page shows its recent runs, found by their keys, and the runs
// stay out of the one-off task lists.
func TestSchedulePages(t *testing.T) {
	ctx := context.Background()
	c := standalone(t)
	ns := redistest.Namespace(t, c)
	q, err := rediswheel.New(c, rediswheel.Options{Namespace: ns, Shards: 4, Retention: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	store := schedules.New(schedules.RedisDefinitions(c, ns), q, nil)
	cb := rediswheel.HTTPTask{URL: "https://example.com/tick", Method: "POST"}
	for _, d := range []schedules.Definition{{Name: "tick", Every: time.Hour, Callback: cb}, {Name: "nightly", Cron: "0 9 * * *", Callback: cb, MaxAttempts: 3}} {
		if _, err := store.Put(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	tick, err := store.Get(ctx, "tick")
	if err != nil {
		t.Fatal(err)
	}
	last, err := tick.Last(time.Now(), 3)
	if err != nil {
		t.Fatal(err)
	}
	// Its latest time ran and succeeded, the one before died, the third never ran.
	finish(t, q, map[string]error{schedules.RunKey(tick, last[0]): nil, schedules.RunKey(tick, last[1]): failed("HTTP 500")})
	h := newDashboardWith(t, Config{Queue: q, Schedules: store})

	before := time.Now()
	r := get(t, h, "/ui/schedules", true)
	after := time.Now()
	mustContain(t, "schedules", r.body, `<tr data-name="nightly">`, `<tr data-name="tick">`, "every 1h0m0s", "cron <code>0 9 * * *</code>",
		`<code>POST https://example.com/tick</code>`, `<a href="/ui/schedule?name=tick">tick</a>`)
	for _, name := range []string{"tick", "nightly"} {
		d, _ := store.Get(ctx, name)
		n1, _ := d.Next(before)
		n2, _ := d.Next(after)
		s1, s2 := n1.UTC().Format("2006-01-02 15:04:05.000Z"), n2.UTC().Format("2006-01-02 15:04:05.000Z")
		if !strings.Contains(r.body, `<td class="next">`+s1+", in ") && !strings.Contains(r.body, `<td class="next">`+s2+", in ") {
			t.Errorf("schedules page lacks %s's next run %s:\n%s", name, s1, r.body)
		}
	}

	r = get(t, h, "/ui/schedule?name=tick", true)
	keys := rowKeys(r.body)
	if len(keys) != 1+recentRuns || keys[1] != schedules.RunKey(tick, last[0]) || keys[2] != schedules.RunKey(tick, last[1]) {
		t.Fatalf("schedule page rows %q: want the next run, then the latest %d, latest first", keys, recentRuns)
	}
	mustContain(t, "schedule page", r.body, `<td class="state">done</td><td class="n">1/25</td>`,
		`<td class="state">dead</td><td class="n">1/25</td><td><code>HTTP 500</code></td>`,
		`<tr data-key="`+schedules.RunKey(tick, last[2])+`">`+"\n<td>"+last[2].UTC().Format("2006-01-02 15:04:05.000Z"))

	// Apart from one-off tasks: the done list shows the run only as a schedule run.
	mustNotContain(t, "one-off done list", get(t, h, "/ui/tasks?state=done", true).body, "periodic:")
	mustContain(t, "schedule runs, done", get(t, h, "/ui/tasks?state=done&kind=schedule&prefix=periodic:tick~", true).body,
		`<tr data-key="`+schedules.RunKey(tick, last[0])+`">`)

	if r := get(t, h, "/ui/schedule?name=nope", true); r.status != http.StatusNotFound {
		t.Errorf("unknown schedule: %d", r.status)
	}
	none := newDashboard(t, q)
	mustContain(t, "schedules without a store", get(t, none, "/ui/schedules", true).body, `id="noschedules"`)
	if r := get(t, none, "/ui/schedule?name=tick", true); r.status != http.StatusNotFound {
		t.Errorf("schedule page without a store: %d", r.status)
	}
}
