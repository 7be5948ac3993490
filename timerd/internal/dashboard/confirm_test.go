package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// Cancel is two steps: the button is a GET of a page that says what Cancel
// will do and holds the form; the form's POST carries confirm=yes, and a
// POST without it changes nothing.
func TestCancelAsksForConfirmation(t *testing.T) {
	ctx := context.Background()
	q := newQueue(t, standalone(t))
	fixture(t, q, []string{hostileKey}, nil, 0, 1)
	h := newDashboard(t, q)
	key := "later/000"
	state := func() rediswheel.State {
		info, err := q.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		return info.State
	}

	task := get(t, h, "/ui/task?key="+key, true)
	mustContain(t, "task page", task.body, `<form method="get" action="/ui/cancel"><input type="hidden" name="key" value="later/000">`)
	mustNotContain(t, "task page", task.body, `<form method="post" action="/ui/cancel">`)

	r := get(t, h, "/ui/cancel?key="+key+"&from=task", true)
	if r.status != http.StatusOK {
		t.Fatalf("confirmation page: %d %s", r.status, r.body)
	}
	mustContain(t, "confirmation page", r.body, `Cancel the scheduled task &#34;later/000&#34;?`,
		`<form method="post" action="/ui/cancel" id="confirm-form">`, `<input type="hidden" name="confirm" value="yes">`,
		`<input type="hidden" name="key" value="later/000">`, `<input type="hidden" name="from" value="task">`,
		`<a href="/ui/task?key=later%2F000" id="back">`)
	if s := state(); s != rediswheel.StateScheduled {
		t.Fatalf("after the confirmation page: %s, want still scheduled", s)
	}

	for _, confirm := range []string{"", "no", "1"} {
		r = post(t, h, "/ui/cancel", url.Values{"key": {key}, "from": {"task"}, "confirm": {confirm}}, true, nil)
		if r.status != http.StatusBadRequest || state() != rediswheel.StateScheduled {
			t.Fatalf("POST without confirm=yes (%q): %d, task %s; want 400 and still scheduled", confirm, r.status, state())
		}
	}
	r = post(t, h, "/ui/cancel", url.Values{"key": {key}, "from": {"task"}, "confirm": {"yes"}}, true, nil)
	checkRedirect(t, r, "/ui/task?done=cancelled&key=later%2F000")
	if s := state(); s != rediswheel.StateCancelled {
		t.Fatalf("after the confirmed POST: %s, want cancelled", s)
	}

	// The dead set's Cancel leads to the same page, back to the dead set;
	// a hostile key is text there too.
	dead := get(t, h, "/ui/dead", true)
	mustContain(t, "dead set", dead.body, `<form method="get" action="/ui/cancel"><input type="hidden" name="key" value="&lt;script&gt;alert(1)&lt;/script&gt;">`)
	r = get(t, h, "/ui/cancel?"+url.Values{"key": {hostileKey}, "from": {"dead"}}.Encode(), true)
	mustContain(t, "confirmation of the hostile key", r.body, `Cancel the dead task &#34;&lt;script&gt;alert(1)&lt;/script&gt;&#34;?`,
		`<a href="/ui/dead" id="back">`)
	mustNotContain(t, "confirmation of the hostile key", r.body, hostileKey)

	for path, status := range map[string]int{
		"/ui/cancel?key=never-added&from=task": http.StatusNotFound,
		"/ui/cancel?key=later/000&from=evil":   http.StatusBadRequest,
	} {
		if r := get(t, h, path, true); r.status != status {
			t.Errorf("GET %s: %d, want %d", path, r.status, status)
		}
	}
}

// Pause and Resume: the overview links to a confirmation, whose form does
// it; the overview then shows the state and the other link.
func TestPauseAndResume(t *testing.T) {
	ctx := context.Background()
	q := newQueue(t, standalone(t))
	h := newDashboard(t, q)
	paused := func() bool {
		st, err := q.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st.Paused
	}

	mustContain(t, "overview", get(t, h, "/ui/", true).body, `<a href="/ui/pause" id="pause">`)
	r := get(t, h, "/ui/pause", true)
	mustContain(t, "pause confirmation", r.body, `<form method="post" action="/ui/pause" id="confirm-form">`, "until Resume")
	if paused() {
		t.Fatal("paused by the confirmation page")
	}
	if r = post(t, h, "/ui/pause", url.Values{}, true, nil); r.status != http.StatusBadRequest || paused() {
		t.Fatalf("POST /ui/pause without confirm: %d, paused %v; want 400, not paused", r.status, paused())
	}
	r = post(t, h, "/ui/pause", url.Values{"confirm": {"yes"}}, true, nil)
	checkRedirect(t, r, "/ui/?done=paused")
	if !paused() {
		t.Fatal("not paused after the confirmed POST")
	}
	over := get(t, h, "/ui/?done=paused", true)
	mustContain(t, "overview when paused", over.body, "Claims are paused", `<a href="/ui/resume" id="resume">`,
		`<p id="outcome" data-key="" class="ok">Paused: no task is delivered until Resume.</p>`)

	if r = post(t, h, "/ui/resume", url.Values{"confirm": {"no"}}, true, nil); r.status != http.StatusBadRequest || !paused() {
		t.Fatalf("POST /ui/resume without confirm=yes: %d, paused %v; want 400, still paused", r.status, paused())
	}
	mustContain(t, "resume confirmation", get(t, h, "/ui/resume", true).body, `<form method="post" action="/ui/resume" id="confirm-form">`)
	checkRedirect(t, post(t, h, "/ui/resume", url.Values{"confirm": {"yes"}}, true, nil), "/ui/?done=resumed")
	if paused() {
		t.Fatal("still paused after the confirmed Resume")
	}
}

// Bulk requeue and delete of the dead set: the confirmation says how many,
// and the POST acts on at most that many.
func TestBulkDeadActions(t *testing.T) {
	ctx := context.Background()
	q := newQueue(t, standalone(t))
	fixture(t, q, []string{"d1", "d2", "d3"}, []string{"ok"}, 0, 0)
	h := newDashboard(t, q)
	dead := func() int64 { return stats(t, q).Total.Dead }

	mustContain(t, "dead set", get(t, h, "/ui/dead", true).body, `<a href="/ui/dead/requeue-all" id="requeue-all">`, `<a href="/ui/dead/cancel-all" id="cancel-all">`)
	r := get(t, h, "/ui/dead/requeue-all", true)
	mustContain(t, "requeue-all confirmation", r.body, "Requeue all 3 dead tasks?", `<input type="hidden" name="n" value="3">`,
		`<form method="post" action="/ui/dead/requeue-all" id="confirm-form">`)
	if dead() != 3 {
		t.Fatalf("the confirmation page changed the dead set: %d", dead())
	}
	if r = post(t, h, "/ui/dead/requeue-all", url.Values{"n": {"3"}}, true, nil); r.status != http.StatusBadRequest || dead() != 3 {
		t.Fatalf("POST without confirm: %d, %d dead; want 400 and 3", r.status, dead())
	}
	if r = post(t, h, "/ui/dead/requeue-all", url.Values{"n": {"-1"}, "confirm": {"yes"}}, true, nil); r.status != http.StatusBadRequest || dead() != 3 {
		t.Fatalf("POST with n -1: %d, %d dead; want 400 and 3", r.status, dead())
	}
	// Two confirmed, say a page shown before the third died: two requeued.
	checkRedirect(t, post(t, h, "/ui/dead/requeue-all", url.Values{"n": {"2"}, "confirm": {"yes"}}, true, nil), "/ui/dead?done=bulk_requeued&n=2")
	if dead() != 1 {
		t.Fatalf("%d dead after requeueing 2 of 3, want 1", dead())
	}
	var left string // the one still dead
	for _, k := range []string{"d1", "d2", "d3"} {
		info, err := q.Get(ctx, k)
		switch {
		case err == nil && info.State == rediswheel.StateDead:
			left = k
		case err != nil || info.State != rediswheel.StateRetrying:
			t.Errorf("%s after the bulk requeue: %+v, %v; want retrying or dead", k, info, err)
		}
	}
	mustContain(t, "dead set after", get(t, h, "/ui/dead?done=bulk_requeued&n=2", true).body, `class="ok">Requeued 2 dead tasks: due now.</p>`)

	mustContain(t, "cancel-all confirmation", get(t, h, "/ui/dead/cancel-all", true).body, "Delete all 1 dead task?", `<input type="hidden" name="n" value="1">`)
	checkRedirect(t, post(t, h, "/ui/dead/cancel-all", url.Values{"n": {"1"}, "confirm": {"yes"}}, true, nil), "/ui/dead?done=bulk_cancelled&n=1")
	if info, err := q.Get(ctx, left); err != nil || info.State != rediswheel.StateCancelled || dead() != 0 {
		t.Fatalf("%s after delete all: %+v, %v, %d dead; want cancelled, 0", left, info, err, dead())
	}
	r = get(t, h, "/ui/dead/cancel-all", true)
	mustContain(t, "confirmation of an empty set", r.body, "The dead set is empty.")
	mustNotContain(t, "confirmation of an empty set", r.body, `id="confirm-form"`)
	if r := get(t, h, "/ui/dead/drop-all", true); r.status != http.StatusNotFound {
		t.Errorf("unknown bulk action: %d, want 404", r.status)
	}
}

// Every new POST is refused from another origin, changing nothing, even
// with confirm=yes.
func TestCrossOriginNewActionsRefused(t *testing.T) {
	q := newQueue(t, standalone(t))
	fixture(t, q, []string{"victim"}, nil, 0, 0)
	h := newDashboard(t, q)
	form := url.Values{"key": {"victim"}, "from": {"dead"}, "confirm": {"yes"}, "n": {"1"}, "zone": {"Asia/Tokyo"}, "refresh": {"on"}}
	for _, path := range []string{"/ui/cancel", "/ui/pause", "/ui/resume", "/ui/dead/requeue-all", "/ui/dead/cancel-all", "/ui/prefs"} {
		for name, headers := range map[string]map[string]string{
			"Origin of another site":    {"Origin": "http://evil.test"},
			"Sec-Fetch-Site cross-site": {"Sec-Fetch-Site": "cross-site"},
			"no origin at all":          {"Origin": ""},
		} {
			r := post(t, h, path, form, true, headers)
			if r.status != http.StatusForbidden || r.header.Get("Set-Cookie") != "" {
				t.Errorf("POST %s, %s: %d (Set-Cookie %q), want 403 and no cookie", path, name, r.status, r.header.Get("Set-Cookie"))
			}
		}
	}
	st := stats(t, q)
	if st.Paused || st.Total.Dead != 1 {
		t.Fatalf("after the refused POSTs: paused %v, %d dead; want running, 1", st.Paused, st.Total.Dead)
	}
}
