package dashboard

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/go-timingwheel/timingwheel/durable"
)

// An operator in the real browser filters the scheduled tasks by a key
// prefix, ticks two and cancels them, then reschedules all the filter still
// matches, each through a confirmation with the count. Screenshots:
// dashboard-select-list.png, dashboard-select-confirm.png,
// dashboard-select-done.png, dashboard-select-all-confirm.png.
func TestBrowserSelection(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		required(t, chromium+" is missing (scripts/chromium.sh installs it)")
	}
	bg := context.Background()
	q := newQueue(t, standalone(t))
	for _, k := range []string{"sel/1", "sel/2", "sel/3", "sel/4", "other/1"} {
		if _, err := q.AddAfter(bg, k, nil, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(newDashboardWith(t, Config{Queue: q, Auth: roleChecker(t)}))
	defer srv.Close()
	artifacts := os.Getenv("TIMERD_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	ctx, cancel := browser(t)
	defer cancel()
	snap := func(name string) { screenshot(t, ctx, filepath.Join(artifacts, "dashboard-"+name+".png")) }

	run(t, ctx, "log in as the operator", chromedp.Navigate(srv.URL+"/ui/login"), chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", roleCredentials[1].Token), chromedp.Click("#login"), chromedp.WaitVisible("#total-due"))
	run(t, ctx, "filter by prefix", chromedp.Navigate(srv.URL+"/ui/tasks?state=scheduled"), chromedp.WaitVisible("#prefix"),
		chromedp.SendKeys("#prefix", "sel/"), chromedp.Click("#apply"), chromedp.WaitVisible(`#prefix[value="sel/"]`),
		chromedp.Click(`tr[data-key="sel/1"] input.select`, chromedp.NodeVisible),
		chromedp.Click(`tr[data-key="sel/2"] input.select`, chromedp.NodeVisible),
		chromedp.SetValue("#op", "cancel"))
	snap("select-list")
	var question, outcome string
	run(t, ctx, "act on the selected", chromedp.Click("#act-selected"), chromedp.WaitVisible("#confirm"), chromedp.Text("#question", &question))
	if question != "Cancel 2 selected scheduled tasks?" {
		t.Errorf("the confirmation asks %q", question)
	}
	if info, err := q.Get(bg, "sel/1"); err != nil || info.State != durable.StateScheduled {
		t.Errorf("sel/1 on the confirmation page: %+v, %v; want it still scheduled", info, err)
	}
	snap("select-confirm")
	run(t, ctx, "confirm", chromedp.Click("#confirm"), chromedp.WaitVisible("#outcome"), chromedp.Text("#outcome", &outcome))
	if outcome != "Cancelled 2 of 2 tasks." {
		t.Errorf("the outcome: %q", outcome)
	}
	snap("select-done")
	for _, k := range []string{"sel/1", "sel/2"} {
		if info, err := q.Get(bg, k); err != nil || info.State != durable.StateCancelled {
			t.Errorf("%s after the confirmed Cancel: %+v, %v; want cancelled", k, info.State, err)
		}
	}

	run(t, ctx, "reschedule all matching", chromedp.SetValue("#op", "reschedule"), chromedp.SetValue("#delay", "2h"),
		chromedp.Click("#act-all"), chromedp.WaitVisible("#confirm"), chromedp.Text("#question", &question))
	if question != `Reschedule all 2 scheduled tasks matching this filter (one-off, key starting with "sel/")?` {
		t.Errorf("the confirmation of all asks %q", question)
	}
	snap("select-all-confirm")
	before := time.Now()
	run(t, ctx, "confirm", chromedp.Click("#confirm"), chromedp.WaitVisible("#outcome"), chromedp.Text("#outcome", &outcome))
	if outcome != "Rescheduled 2 of 2 tasks." {
		t.Errorf("the outcome: %q", outcome)
	}
	for k, later := range map[string]bool{"sel/3": true, "sel/4": true, "other/1": false} {
		info, err := q.Get(bg, k)
		if err != nil || info.Due.After(before.Add(90*time.Minute)) != later {
			t.Errorf("%s due %v after rescheduling the filter's tasks by 2h at %v (moved: want %v)", k, info.Due, before, later)
		}
	}
}
