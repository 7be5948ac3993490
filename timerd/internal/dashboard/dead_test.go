package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/redis/go-redis/v9"
)

// The dead set lists the dead tasks with a Requeue and a Cancel form each;
// the forms do what they say in Redis, and the page after shows the outcome.
func TestDeadSetRequeueAndCancel(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c redis.UniversalClient) {
		ctx := context.Background()
		q := newQueue(t, c)
		fixture(t, q, []string{"d1", "d2", "d3"}, []string{"ok"}, 0, 0)
		h := newDashboard(t, q)

		r := get(t, h, "/ui/dead", true)
		for _, k := range []string{"d1", "d2", "d3"} {
			row := `<tr data-key="` + k + `">`
			if !strings.Contains(r.body, row) {
				t.Fatalf("dead set page lacks %s: %s", row, r.body)
			}
		}
		if strings.Contains(r.body, `<tr data-key="ok">`) {
			t.Fatalf("dead set page shows a done task")
		}
		if n := strings.Count(r.body, `<button class="requeue">`); n != 3 {
			t.Fatalf("%d Requeue buttons, want 3", n)
		}

		r = post(t, h, "/ui/requeue", url.Values{"key": {"d1"}, "from": {"dead"}}, true, nil)
		checkRedirect(t, r, "/ui/dead?done=requeued&key=d1")
		if info, err := q.Get(ctx, "d1"); err != nil || info.State != rediswheel.StateRetrying || info.Attempts != 0 {
			t.Fatalf("d1 after Requeue: %+v, %v; want retrying (it keeps its error) with attempts reset", info, err)
		}
		page := get(t, h, "/ui/dead?done=requeued&key=d1", true)
		if got := cellsByID(page.body)["outcome"]; got != "Requeued &#34;d1&#34;: it is due now." {
			t.Errorf("outcome after requeue: %q", got)
		}
		if strings.Contains(page.body, `<tr data-key="d1">`) {
			t.Errorf("d1 still listed in the dead set after Requeue")
		}

		r = post(t, h, "/ui/cancel", url.Values{"key": {"d2"}, "from": {"dead"}, "confirm": {"yes"}}, true, nil)
		checkRedirect(t, r, "/ui/dead?done=cancelled&key=d2")
		if info, err := q.Get(ctx, "d2"); err != nil || info.State != rediswheel.StateCancelled {
			t.Fatalf("d2 after Cancel: %+v, %v; want cancelled (retained)", info, err)
		}

		// Pressing a button twice (a second tab): the outcome says nothing happened.
		r = post(t, h, "/ui/requeue", url.Values{"key": {"d1"}, "from": {"dead"}}, true, nil)
		checkRedirect(t, r, "/ui/dead?done=not_dead&key=d1")
		if got := cellsByID(get(t, h, "/ui/dead?done=not_dead&key=d1", true).body)["outcome"]; !strings.Contains(got, "nothing requeued") {
			t.Errorf("outcome of a second requeue: %q", got)
		}
		r = post(t, h, "/ui/cancel", url.Values{"key": {"never-added"}, "from": {"dead"}, "confirm": {"yes"}}, true, nil)
		checkRedirect(t, r, "/ui/dead?done=not_found&key=never-added")

		// From the task page, back to the task page.
		r = post(t, h, "/ui/requeue", url.Values{"key": {"d3"}, "from": {"task"}}, true, nil)
		checkRedirect(t, r, "/ui/task?done=requeued&key=d3")
		if info, err := q.Get(ctx, "d3"); err != nil || info.State != rediswheel.StateRetrying {
			t.Fatalf("d3 after Requeue: %+v, %v", info, err)
		}

		tasks, _, err := q.List(ctx, rediswheel.StateDead, "", 10)
		if err != nil || len(tasks) != 0 {
			t.Fatalf("dead set in Redis at the end: %v, %v; want empty", tasks, err)
		}
	})
}

// A malformed action changes nothing and says why.
func TestActionsRefuseBadForms(t *testing.T) {
	q := newQueue(t, standalone(t))
	fixture(t, q, []string{"d1"}, nil, 0, 0)
	h := newDashboard(t, q)
	for _, form := range []url.Values{
		{"key": {"d1"}}, // no from
		{"key": {"d1"}, "from": {"https://evil.test/"}},        // from is not a page
		{"key": {""}, "from": {"dead"}},                        // no key
		{"key": {strings.Repeat("k", 2000)}, "from": {"dead"}}, // too long for rediswheel
	} {
		for _, path := range []string{"/ui/requeue", "/ui/cancel"} {
			r := post(t, h, path, form, true, nil)
			if r.status != http.StatusBadRequest {
				t.Errorf("POST %s %v: %d, want 400", path, form, r.status)
			}
		}
	}
	if info, err := q.Get(context.Background(), "d1"); err != nil || info.State != rediswheel.StateDead {
		t.Fatalf("d1 after the bad forms: %+v, %v; want it still dead", info, err)
	}
}

func checkRedirect(t *testing.T, r response, want string) {
	t.Helper()
	if r.status != http.StatusSeeOther || r.header.Get("Location") != want {
		t.Fatalf("%d to %q, want 303 to %q; body %s", r.status, r.header.Get("Location"), want, r.body)
	}
}
