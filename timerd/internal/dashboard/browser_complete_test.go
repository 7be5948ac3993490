package dashboard

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/go-timingwheel/timingwheel/durable"
)

// An operator in the real browser completes a task waiting on a 202 with
// the completion token its receiver got. Screenshots:
// dashboard-complete-form.png, dashboard-complete-done.png.
func TestBrowserComplete(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		required(t, chromium+" is missing (scripts/chromium.sh installs it)")
	}
	q := newQueue(t, standalone(t))
	tokens := detached(t, q, "async/b")
	srv := httptest.NewServer(newDashboardWith(t, Config{Queue: q, Auth: roleChecker(t)}))
	defer srv.Close()
	artifacts := os.Getenv("TIMERD_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	ctx, cancel := browser(t)
	defer cancel()
	run(t, ctx, "log in as the operator", chromedp.Navigate(srv.URL+"/ui/login"), chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", roleCredentials[1].Token), chromedp.Click("#login"), chromedp.WaitVisible("#total-due"))
	run(t, ctx, "open the task", chromedp.Navigate(srv.URL+"/ui/task?key=async%2Fb"), chromedp.WaitVisible("#complete-form"),
		chromedp.SendKeys("#completion-token", tokens["async/b"]))
	screenshot(t, ctx, filepath.Join(artifacts, "dashboard-complete-form.png"))
	var outcome, state string
	run(t, ctx, "complete", chromedp.Click("#complete"), chromedp.WaitVisible("#outcome"), chromedp.Text("#outcome", &outcome),
		chromedp.Text("#state", &state))
	if outcome != `Completed "async/b": done.` || state != "done" {
		t.Errorf("after Complete: outcome %q, state %q", outcome, state)
	}
	screenshot(t, ctx, filepath.Join(artifacts, "dashboard-complete-done.png"))
	if info, err := q.Get(context.Background(), "async/b"); err != nil || info.State != durable.StateDone {
		t.Errorf("async/b after Complete in the browser: %+v, %v; want done", info.State, err)
	}
}
