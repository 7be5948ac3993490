package dashboard

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/sqlitewheel"
)

// heldOrigin runs a Queue on SQLite whose Flow opens an origin's breaker at
// its first failure for an hour: "first" fails (500) and opens it, "parked"
// is claimed after and waits, in flight, behind it. It returns the Queue,
// the Flow and the origin once "parked" waits.
func heldOrigin(t *testing.T) (*durable.Queue, *durable.Flow, string) {
	t.Helper()
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusInternalServerError)
	}))
	t.Cleanup(hook.Close)
	st, err := sqlitewheel.Open(context.Background(), filepath.Join(t.TempDir(), "timerd.db"), sqlitewheel.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	flow, err := durable.NewFlow(durable.FlowOptions{Key: durable.HTTPOrigin, Default: durable.Limit{Concurrency: 3},
		Breaker: durable.Breaker{Failures: 1, CoolDown: time.Hour}})
	if err != nil {
		t.Fatal(err)
	}
	q, err := durable.New(st, durable.Options{Flow: flow, Retention: time.Hour, Backoff: func(int) time.Duration { return time.Hour }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx, durable.HTTPHandler(hook.Client())) }()
	t.Cleanup(func() { cancel(); <-done })

	origin, err := durable.Origin(hook.URL)
	if err != nil {
		t.Fatal(err)
	}
	add := func(key string) {
		if _, err := q.AddHTTPAfter(ctx, key, durable.HTTPTask{Method: "POST", URL: hook.URL + "/x"}, 0); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(what string, ok func(durable.KeyState) bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for {
			for _, s := range flow.States() {
				if s.Key == origin && ok(s) {
					return
				}
			}
			if time.Now().After(deadline) {
				t.Fatalf("no %s: %+v", what, flow.States())
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	add("first")
	waitFor("open breaker", func(s durable.KeyState) bool { return s.Breaker == "open" })
	add("parked")
	waitFor("parked task", func(s durable.KeyState) bool { return s.Waiting == 1 })
	return q, flow, origin
}

// The overview lists each origin the workers are busy with or hold: its
// breaker, running/limit, waiting and held until; the page of a task in
// flight for a held origin says why it waits. Issue 31: 7 tasks showed "in
// flight" with "due in 23s", parked behind an open breaker that only GET
// /v1/limits showed.
func TestOriginsShowBreakerAndWaiting(t *testing.T) {
	q, flow, origin := heldOrigin(t)
	h := newDashboardWith(t, Config{Queue: q, Flow: flow})

	r := get(t, h, "/ui/", true)
	if r.status != http.StatusOK {
		t.Fatalf("GET /ui/: %d %s", r.status, r.body)
	}
	cells := cellsByID(r.body)
	if cells["origin-0"] != origin || cells["origin-0-breaker"] != "open" || cells["origin-0-running"] != "0/3" ||
		cells["origin-0-waiting"] != "1" || cells["origin-0-held"] == "" {
		t.Errorf("origins on the overview: %v", cells)
	}

	r = get(t, h, "/ui/task?key=parked", true)
	mustContain(t, "task page", r.body, `id="held"`, "waiting: origin "+origin+" breaker open until")
	r = get(t, h, "/ui/task?key=first", true)
	mustNotContain(t, "page of a retrying task", r.body, `id="held"`)
}

// Without a Flow (an API-only process, or tests) the overview has no
// origins section and a task page no held line.
func TestOriginsWithoutFlow(t *testing.T) {
	q, _, _ := heldOrigin(t)
	h := newDashboardWith(t, Config{Queue: q})
	mustNotContain(t, "overview", get(t, h, "/ui/", true).body, `id="origins"`)
	mustNotContain(t, "task page", get(t, h, "/ui/task?key=parked", true).body, `id="held"`)
}
