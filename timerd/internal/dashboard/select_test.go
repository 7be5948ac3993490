package dashboard

import (
	"context"
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/pgwheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/pgtest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// selectionForm is the selection form of the scheduled list filtered by
// prefix sel/, for op and scope, with more fields.
func selectionForm(op, scope string, more url.Values) url.Values {
	v := url.Values{"state": {"scheduled"}, "kind": {"oneoff"}, "prefix": {"sel/"}, "op": {op}, "scope": {scope}}
	for k, vs := range more {
		v[k] = vs
	}
	return v
}

// A filtered list offers its actions on the ticked tasks or on all it
// matches; the confirmation says which and how many, its POST does that
// and no more, and the list then shows the outcome: on every store.
func TestSelectionActions(t *testing.T) {
	forEachBackend(t, func(t *testing.T, c redis.UniversalClient) { testSelectionActions(t, newQueue(t, c)) })
	t.Run("postgres", func(t *testing.T) {
		pool := pgtest.Pool(t)
		require.NoError(t, pgwheel.Migrate(context.Background(), pool))
		st, err := pgwheel.New(pool, "tdtest-select")
		require.NoError(t, err)
		q, err := durable.New(st, durable.Options{Retention: time.Hour})
		require.NoError(t, err)
		testSelectionActions(t, q)
	})
}

func testSelectionActions(t *testing.T, q *durable.Queue) {
	{
		ctx := context.Background()
		for _, k := range []string{"sel/1", "sel/2", "sel/3", "sel/4", "sel/5", "other/1"} {
			if _, err := q.AddAfter(ctx, k, nil, time.Hour); err != nil {
				t.Fatal(err)
			}
		}
		h := newDashboard(t, q)
		page := get(t, h, "/ui/tasks?state=scheduled&prefix=sel/", true)
		mustContain(t, "the filtered list", page.body, `<form method="get" action="/ui/select" id="selection">`,
			`<input type="checkbox" name="key" value="sel/1" class="select"`, `<option value="run-now">Run now</option>`,
			`<option value="reschedule">Reschedule</option>`, `<option value="cancel">Cancel</option>`, `id="act-all"`)
		state := func(key string) durable.TaskInfo {
			t.Helper()
			info, err := q.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			return info
		}

		// Two ticked: Cancel.
		sel := selectionForm("cancel", "selected", url.Values{"key": {"sel/1", "sel/2", "sel/1"}})
		r := get(t, h, "/ui/select?"+sel.Encode(), true)
		if r.status != 200 {
			t.Fatalf("the confirmation: %d %s", r.status, r.body)
		}
		mustContain(t, "the confirmation", r.body, "Cancel 2 selected scheduled tasks?", `<li class="key">sel/1</li>`, `<li class="key">sel/2</li>`)
		r = post(t, h, "/ui/select", sel, true, nil) // no confirm=yes
		if r.status != http.StatusBadRequest || state("sel/1").State != durable.StateScheduled {
			t.Fatalf("an unconfirmed selection: %d, sel/1 %s; want 400 and nothing done", r.status, state("sel/1").State)
		}
		sel.Set("confirm", "yes")
		r = post(t, h, "/ui/select", sel, true, nil)
		checkRedirect(t, r, "/ui/tasks?done=selection&kind=oneoff&n=2&of=2&op=cancel&prefix=sel%2F&state=scheduled")
		for _, k := range []string{"sel/1", "sel/2"} {
			if s := state(k).State; s != durable.StateCancelled {
				t.Errorf("%s after Cancel: %s", k, s)
			}
		}
		page = get(t, h, r.header.Get("Location"), true)
		if got := html.UnescapeString(cellsByID(page.body)["outcome"]); got != "Cancelled 2 of 2 tasks." {
			t.Errorf("the outcome: %q", got)
		}

		// All matching (sel/3..5, not other/1): Reschedule by 2h, at most the 3 confirmed.
		all := selectionForm("reschedule", "all", url.Values{"delay": {"2h"}})
		r = get(t, h, "/ui/select?"+all.Encode(), true)
		mustContain(t, "the confirmation of all", html.UnescapeString(r.body),
			`Reschedule all 3 scheduled tasks matching this filter (one-off, key starting with "sel/")?`,
			`<input type="hidden" name="n" value="3">`, `<input type="hidden" name="delay" value="2h0m0s">`)
		all.Set("confirm", "yes")
		all.Set("n", "3")
		before := time.Now()
		r = post(t, h, "/ui/select", all, true, nil)
		checkRedirect(t, r, "/ui/tasks?done=selection&kind=oneoff&n=3&of=3&op=reschedule&prefix=sel%2F&state=scheduled")
		for _, k := range []string{"sel/3", "sel/4", "sel/5"} {
			if due := state(k).Due; due.Before(before.Add(2*time.Hour)) || due.After(time.Now().Add(2*time.Hour+time.Second)) {
				t.Errorf("%s due %v after Reschedule by 2h at %v", k, due, before)
			}
		}
		if due := state("other/1").Due; due.After(time.Now().Add(time.Hour + time.Second)) {
			t.Errorf("other/1, which the filter does not match, was moved to %v", due)
		}

		// Run now, confirmed for 2 of the 3: only 2 move.
		now := selectionForm("run-now", "all", url.Values{"confirm": {"yes"}, "n": {"2"}})
		r = post(t, h, "/ui/select", now, true, nil)
		checkRedirect(t, r, "/ui/tasks?done=selection&kind=oneoff&n=2&of=2&op=run-now&prefix=sel%2F&state=scheduled")
		moved := 0
		for _, k := range []string{"sel/3", "sel/4", "sel/5"} {
			if state(k).Due.Before(time.Now().Add(time.Minute)) {
				moved++
			}
		}
		if moved != 2 {
			t.Errorf("Run now of 2 confirmed moved %d tasks", moved)
		}

		for what, v := range map[string]url.Values{
			"requeue on scheduled":     selectionForm("requeue", "all", nil),
			"reschedule with no delay": selectionForm("reschedule", "all", nil),
			"a negative delay":         selectionForm("reschedule", "all", url.Values{"delay": {"-1h"}}),
			"nothing ticked":           selectionForm("cancel", "selected", nil),
			"no scope":                 selectionForm("cancel", "", nil),
			"a bad state":              {"state": {"nope"}, "op": {"cancel"}, "scope": {"all"}},
		} {
			if r := get(t, h, "/ui/select?"+v.Encode(), true); r.status != http.StatusBadRequest {
				t.Errorf("%s: %d, want 400", what, r.status)
			}
		}
		r = post(t, h, "/ui/select", selectionForm("cancel", "all", url.Values{"confirm": {"yes"}}), true, nil)
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, "count its confirmation page showed") {
			t.Errorf("all without n: %d, want 400", r.status)
		}
	}
}

// The dead tasks a filter matches can be requeued together: the list of
// state dead offers Requeue and Cancel.
func TestSelectionRequeuesDead(t *testing.T) {
	ctx := context.Background()
	q := newQueue(t, standalone(t))
	finish(t, q, map[string]error{"e/timeout-1": failed("Post: i/o timeout"), "e/timeout-2": failed("i/o TIMEOUT"), "e/gone": failed("HTTP 410")})
	h := newDashboard(t, q)
	v := url.Values{"state": {"dead"}, "kind": {"all"}, "error": {"timeout"}, "op": {"requeue"}, "scope": {"all"}}
	mustContain(t, "the confirmation", html.UnescapeString(get(t, h, "/ui/select?"+v.Encode(), true).body),
		`Requeue all 2 dead tasks matching this filter (last error containing "timeout")?`)
	v.Set("confirm", "yes")
	v.Set("n", "2")
	checkRedirect(t, post(t, h, "/ui/select", v, true, nil), "/ui/tasks?done=selection&error=timeout&kind=all&n=2&of=2&op=requeue&state=dead")
	for k, want := range map[string]durable.State{"e/timeout-1": durable.StateRetrying, "e/timeout-2": durable.StateRetrying, "e/gone": durable.StateDead} {
		if info, err := q.Get(ctx, k); err != nil || info.State != want {
			t.Errorf("%s: %v %v, want %s", k, info.State, err, want)
		}
	}
}
