package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/pgwheel"
	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/api"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
	"github.com/go-timingwheel/timingwheel/timerd/internal/pgtest"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
	"github.com/stretchr/testify/require"
)

// chromium is Debian's browser, installed by scripts/chromium.sh.
const chromium = "/usr/bin/chromium"

// The dashboard in a real headless Chromium against real Redis: log in
// through the form, read the counts Stats reports off the overview, open the
// dead set, press Requeue on two tasks (one whose key is HTML) and check in
// Redis that they left the dead set. Screenshots of the overview and of the
// dead set after the requeues go to $TIMERD_ARTIFACTS (default: the test's
// temporary directory), and the test logs their paths.
//
// It runs on Redis and on PostgreSQL (the screenshots of the second are
// named *-postgres.png): the pages read only the Queue, the same on every
// store.
func TestBrowser(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		required(t, chromium+" is missing (scripts/chromium.sh installs it)")
	}
	t.Run("redis", func(t *testing.T) {
		c := standalone(t)
		q := newQueue(t, c)
		testBrowser(t, q, schedules.RedisDefinitions(c, "tdtest-browser"), "")
	})
	t.Run("postgres", func(t *testing.T) {
		pool := pgtest.Pool(t)
		require.NoError(t, pgwheel.Migrate(context.Background(), pool))
		require.NoError(t, schedules.MigratePostgres(context.Background(), pool))
		st, err := pgwheel.New(pool, "tdtest-browser")
		require.NoError(t, err)
		q, err := durable.New(st, durable.Options{Retention: time.Hour})
		require.NoError(t, err)
		testBrowser(t, q, schedules.PostgresDefinitions(pool, "tdtest-browser"), "-postgres")
	})
}

func testBrowser(t *testing.T, q *durable.Queue, defs schedules.Definitions, suffix string) {
	fixture(t, q, []string{"browser/dead-1", "browser/dead-2", hostileKey}, []string{"browser/done"}, 3, 5)
	// The dashboard beside the /v1/ API on one server, as timerd serves them,
	// so that the page can be held against what the API reports.
	scheds := schedules.New(defs, q, nil)
	v1, err := api.New(api.Config{Queue: q, Schedules: scheds,
		CheckCallback: func(context.Context, *url.URL) error { return nil }})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/ui/", newDashboardWith(t, Config{Queue: q, Schedules: scheds}))
	mux.Handle("/v1/", auth.New(testToken).Wrap(v1))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	artifacts := os.Getenv("TIMERD_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}

	ctx, cancel := browser(t)
	defer cancel()
	// No page may open a dialog: a script that ran would (hostileKey is alert(1)).
	dialogs := make(chan string, 1)
	chromedp.ListenTarget(ctx, func(ev any) {
		if d, ok := ev.(*cdppage.EventJavascriptDialogOpening); ok {
			select {
			case dialogs <- d.Message:
			default:
			}
		}
	})

	// Log in through the form: /ui/ sends us to it first.
	var loginURL string
	run(t, ctx, "open /ui/", chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible("#token"), chromedp.Location(&loginURL))
	if loginURL != srv.URL+"/ui/login" {
		t.Fatalf("/ui/ without a session led to %s, want the login page", loginURL)
	}
	run(t, ctx, "log in", chromedp.SendKeys("#token", testToken), chromedp.Click("#login"), chromedp.WaitVisible("#total-due"))

	// The overview shows the counts GET /v1/stats reports, which are
	// Stats', styled (the CSP let the style in).
	st := stats(t, q)
	reported := apiTotals(t, srv.URL)
	var due, scheduled, dead, retained, headerColor string
	run(t, ctx, "read the overview",
		chromedp.Text("#total-due", &due), chromedp.Text("#total-scheduled", &scheduled),
		chromedp.Text("#total-dead", &dead), chromedp.Text("#total-retained", &retained),
		chromedp.Evaluate(`getComputedStyle(document.querySelector("header")).backgroundColor`, &headerColor))
	for name, got := range map[string]struct {
		text string
		want int64
	}{"due": {due, st.Total.Due}, "scheduled": {scheduled, st.Total.Scheduled}, "dead": {dead, st.Total.Dead}, "retained": {retained, st.Total.Retained}} {
		if strings.TrimSpace(got.text) != strconv.FormatInt(got.want, 10) {
			t.Errorf("overview shows %s %q, Stats says %d", name, got.text, got.want)
		}
		if strings.TrimSpace(got.text) != strconv.FormatInt(reported[name], 10) {
			t.Errorf("overview shows %s %q, GET /v1/stats says %d", name, got.text, reported[name])
		}
	}
	if st.Total.Dead != 3 || st.Total.Due != 3 || st.Total.Scheduled != 5 || st.Total.Retained != 1 {
		t.Errorf("Stats %+v, not what the fixture made", st.Total)
	}
	if headerColor != "rgb(38, 50, 56)" {
		t.Errorf("header background %q: the page's CSS did not apply (CSP hash?)", headerColor)
	}
	screenshot(t, ctx, filepath.Join(artifacts, "dashboard-overview"+suffix+".png"))

	// The dead set, reached by its link; Requeue on two rows.
	run(t, ctx, "open the dead set", chromedp.Click(`a[href="/ui/dead"]`, chromedp.NodeVisible), chromedp.WaitVisible("table#dead"))
	for _, key := range []string{"browser/dead-1", hostileKey} {
		// The page we click on may already show an outcome (the last
		// click's): wait for the next page's, which names this key.
		var outcome string
		run(t, ctx, "requeue "+key,
			chromedp.Click(`tr[data-key="`+key+`"] button.requeue`, chromedp.NodeVisible),
			chromedp.WaitVisible(`#outcome[data-key="`+key+`"]`),
			chromedp.Text("#outcome", &outcome))
		if want := "Requeued " + strconv.Quote(key) + ": it is due now."; outcome != want {
			t.Errorf("outcome %q, want %q", outcome, want)
		}
		info, err := q.Get(context.Background(), key)
		if err != nil || info.State == rediswheel.StateDead {
			t.Errorf("%s after Requeue in the browser: %+v, %v; want it out of the dead set", key, info, err)
		}
	}
	var rows int
	run(t, ctx, "count dead rows", chromedp.Evaluate(`document.querySelectorAll("table#dead tr[data-key]").length`, &rows))
	if rows != 1 || stats(t, q).Total.Dead != 1 {
		t.Errorf("dead set after two requeues: %d rows on the page, %d in the store; want 1", rows, stats(t, q).Total.Dead)
	}
	screenshot(t, ctx, filepath.Join(artifacts, "dashboard-dead"+suffix+".png"))

	operatorPages(t, ctx, q, scheds, srv.URL, artifacts, suffix)

	select {
	case msg := <-dialogs:
		t.Errorf("a page opened a JavaScript dialog %q: a script ran", msg)
	default:
	}
}

// operatorPages goes through the operator's pages and actions in the
// browser: a task's request and its Cancel with the confirmation, Pause and
// Resume, the bulk requeue of the dead set, a filter, the zone picker, the
// schedules and the auto-refresh toggle; each checked in the store and
// screenshotted (dashboard-<what><suffix>.png).
func operatorPages(t *testing.T, ctx context.Context, q *durable.Queue, scheds *schedules.Store, base, artifacts, suffix string) {
	bg := context.Background()
	shot := func(name string) { screenshot(t, ctx, filepath.Join(artifacts, "dashboard-"+name+suffix+".png")) }
	if _, err := q.AddHTTP(bg, "browser/http", durable.HTTPTask{URL: "https://example.com/hook", Method: "POST",
		Header: http.Header{"Authorization": {"Bearer browser-secret"}}, Body: []byte(`{"x":"<b>hi</b>"}`)}, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := scheds.Put(bg, schedules.Definition{Name: "browser-tick", Every: time.Hour,
		Callback: durable.HTTPTask{URL: "https://example.com/tick", Method: "POST"}}); err != nil {
		t.Fatal(err)
	}

	// The task's request, then Cancel through its confirmation.
	var headers, body string
	run(t, ctx, "open a task with a request", chromedp.Navigate(base+"/ui/task?key=browser/http"), chromedp.WaitVisible("#req-method"),
		chromedp.Text("#req-headers", &headers), chromedp.Text("#req-body", &body))
	if !strings.Contains(headers, "Authorization") || strings.Contains(headers, "browser-secret") || body != `{"x":"<b>hi</b>"}` {
		t.Errorf("request shown: headers %q, body %q; want the name without its value, the body as text", headers, body)
	}
	shot("task-request")
	var question string
	run(t, ctx, "press Cancel", chromedp.Click("button.cancel", chromedp.NodeVisible), chromedp.WaitVisible("#confirm"), chromedp.Text("#question", &question))
	if info, err := q.Get(bg, "browser/http"); err != nil || info.State != durable.StateScheduled || !strings.Contains(question, "browser/http") {
		t.Errorf("on the confirmation page %q the task is %+v, %v; want it still scheduled", question, info, err)
	}
	shot("cancel-confirm")
	run(t, ctx, "confirm Cancel", chromedp.Click("#confirm"), chromedp.WaitVisible(`#outcome[data-key="browser/http"]`))
	if info, err := q.Get(bg, "browser/http"); err != nil || info.State != durable.StateCancelled {
		t.Errorf("after the confirmed Cancel: %+v, %v; want cancelled", info, err)
	}

	// Pause and Resume, each confirmed.
	run(t, ctx, "pause", chromedp.Navigate(base+"/ui/"), chromedp.Click("#pause", chromedp.NodeVisible), chromedp.WaitVisible("#confirm"),
		chromedp.Click("#confirm"), chromedp.WaitVisible("#resume"))
	if !stats(t, q).Paused {
		t.Error("not paused after the confirmed Pause in the browser")
	}
	shot("overview-paused")
	run(t, ctx, "resume", chromedp.Click("#resume"), chromedp.WaitVisible("#confirm"), chromedp.Click("#confirm"), chromedp.WaitVisible("#pause"))
	if stats(t, q).Paused {
		t.Error("still paused after the confirmed Resume in the browser")
	}

	// Requeue all of the dead set: the confirmation says how many.
	run(t, ctx, "requeue all", chromedp.Navigate(base+"/ui/dead"), chromedp.Click("#requeue-all", chromedp.NodeVisible),
		chromedp.WaitVisible("#confirm"), chromedp.Text("#question", &question))
	if question != "Requeue all 1 dead task?" {
		t.Errorf("bulk confirmation asks %q, want the count of 1", question)
	}
	shot("dead-bulk-confirm")
	var outcome string
	run(t, ctx, "confirm requeue all", chromedp.Click("#confirm"), chromedp.WaitVisible("#outcome"), chromedp.Text("#outcome", &outcome))
	if n := stats(t, q).Total.Dead; n != 0 || outcome != "Requeued 1 dead task: due now." {
		t.Errorf("after requeue all: %d dead, outcome %q", n, outcome)
	}

	// A filter by key prefix, then the zone picker.
	var rows int
	run(t, ctx, "filter by prefix", chromedp.Navigate(base+"/ui/tasks?state=scheduled"), chromedp.WaitVisible("#prefix"),
		chromedp.SendKeys("#prefix", "later/"), chromedp.Click("#apply"),
		// The page before has #scanned too: wait for the filtered one.
		chromedp.WaitVisible(`#prefix[value="later/"]`),
		chromedp.Evaluate(`document.querySelectorAll("table#tasks tr[data-key]").length`, &rows))
	if rows != 5 {
		t.Errorf("prefix later/ shows %d rows, want the fixture's 5", rows)
	}
	var text string
	run(t, ctx, "pick a zone", chromedp.SetValue("#zone", "Asia/Tokyo"), chromedp.Click("#set-zone"),
		chromedp.WaitVisible(`#zone[value="Asia/Tokyo"]`), chromedp.Text("table#tasks", &text))
	if !strings.Contains(text, "+09:00, in ") {
		t.Errorf("times after picking Asia/Tokyo: %q; want +09:00 and relative", text)
	}
	shot("tasks-filtered-tokyo")

	// The schedules and one schedule's page.
	run(t, ctx, "open the schedules", chromedp.Click(`a[href="/ui/schedules"]`, chromedp.NodeVisible),
		chromedp.WaitVisible(`tr[data-name="browser-tick"]`), chromedp.Text(`tr[data-name="browser-tick"] td.next`, &text))
	if !strings.Contains(text, ":00:00.000+09:00, in ") {
		t.Errorf("next run %q, want the next hour in Tokyo time", text)
	}
	shot("schedules")
	run(t, ctx, "open a schedule", chromedp.Click(`a[href="/ui/schedule?name=browser-tick"]`, chromedp.NodeVisible), chromedp.WaitVisible("table.runs"))
	shot("schedule")

	// Auto-refresh on: the page carries a meta refresh; then off again.
	var meta bool
	run(t, ctx, "auto-refresh on", chromedp.Click("#refresh"), chromedp.WaitVisible(`#refresh[data-on="on"]`),
		chromedp.Evaluate(`document.querySelector('meta[http-equiv="refresh"]') !== null`, &meta))
	if !meta {
		t.Error("auto-refresh on, but no meta refresh")
	}
	run(t, ctx, "auto-refresh off", chromedp.Click("#refresh"), chromedp.WaitVisible(`#refresh[data-on="off"]`),
		chromedp.Evaluate(`document.querySelector('meta[http-equiv="refresh"]') !== null`, &meta))
	if meta {
		t.Error("auto-refresh off, but a meta refresh")
	}
}

// browser starts a headless Chromium with a fresh profile and a tab in it;
// cancel closes the browser and waits for its process to end.
//
// The flags keep it from reaching for the network, which this machine does
// not have and without which Chromium stalls for a minute (QUIC, background
// networking, component updates, sync, first-run tasks), and let it run as
// root in a container (no sandbox, no GPU).
func browser(t *testing.T) (context.Context, context.CancelFunc) {
	profile := t.TempDir()
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.NoDefaultBrowserCheck,
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 900),
	)
	ctx, cancelTab := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	// Chromium's helpers (zygote, renderer, GPU) may outlive the main
	// process that cancelAlloc waits for by a moment; the test must not.
	t.Cleanup(func() { waitGone(t, profile) })
	// Start the browser now, so that a browser that cannot start fails here.
	if err := chromedp.Run(ctx); err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("starting %s: %v", chromium, err)
	}
	return ctx, func() {
		cancelTab()
		cancelAlloc()
	}
}

// waitGone waits until no process runs with the browser profile dir, so
// that no browser process outlives the test. It signals only processes whose
// command line names that dir, which only the browser started here knows.
func waitGone(t *testing.T, profile string) {
	mark := []byte("--user-data-dir=" + profile)
	ours := func() (pids []int) {
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			pid, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			if err == nil && bytes.Contains(cmd, mark) {
				pids = append(pids, pid)
			}
		}
		return pids
	}
	deadline := time.Now().Add(redistest.WaitBound)
	for pids := ours(); len(pids) > 0; pids = ours() {
		if time.Now().After(deadline) {
			t.Errorf("browser processes %v still running %v after the browser closed; killing them", pids, redistest.WaitBound)
			for _, pid := range pids {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// run runs actions in the tab, each step within 30 seconds.
func run(t *testing.T, ctx context.Context, step string, actions ...chromedp.Action) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := chromedp.Run(ctx, actions...); err != nil {
		var where string
		chromedp.Run(ctx, chromedp.Location(&where))
		if errors.Is(err, context.DeadlineExceeded) {
			err = errors.New("timed out after 30s")
		}
		t.Fatalf("%s (at %s): %v", step, where, err)
	}
}

// screenshot saves the whole page as a PNG at path, and logs the path.
func screenshot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	var png []byte
	run(t, ctx, "screenshot", chromedp.FullScreenshot(&png, 100))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
}

// apiTotals returns the totals GET /v1/stats reports, by field name.
func apiTotals(t *testing.T, base string) map[string]int64 {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/v1/stats", nil)
	req.Header.Set("Authorization", "Bearer "+testToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Total map[string]any `json:"total"`
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /v1/stats: %s", resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, name := range []string{"due", "scheduled", "dead", "retained"} {
		n, ok := body.Total[name].(float64)
		if !ok {
			t.Fatalf("GET /v1/stats: total.%s is %v", name, body.Total[name])
		}
		out[name] = int64(n)
	}
	return out
}
