package dashboard

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// A read-only token in the real browser: it logs in and reads the dead set,
// a task, a list and the overview, none of which shows it a button or link
// of an action (Requeue, Cancel, the bulk actions, selections, Pause); a completion token is
// no login. Screenshots: dashboard-read-only-dead.png and
// dashboard-read-only-overview.png.
func TestBrowserReadOnly(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		required(t, chromium+" is missing (scripts/chromium.sh installs it)")
	}
	q := newQueue(t, standalone(t))
	fixture(t, q, []string{"ro/dead-1"}, nil, 0, 0)
	checker, err := auth.NewCredentials([]auth.Credential{
		{Name: "root", Role: auth.RoleAdmin, Token: testToken},
		{Name: "viewer", Role: auth.RoleReadOnly, Token: "viewer-token-0123456789"},
		{Name: "receiver", Role: auth.RoleCompletion, Token: "receiver-token-0123456789"},
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(newDashboardWith(t, Config{Queue: q, Auth: checker}))
	defer srv.Close()
	artifacts := os.Getenv("TIMERD_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	ctx, cancel := browser(t)
	defer cancel()

	var wrong string
	run(t, ctx, "log in with the completion token", chromedp.Navigate(srv.URL+"/ui/login"), chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", "receiver-token-0123456789"), chromedp.Click("#login"), chromedp.WaitVisible("#token"),
		chromedp.Location(&wrong))
	if !strings.HasSuffix(wrong, "/ui/login") {
		t.Errorf("the completion token's login led to %s, want the login form again", wrong)
	}
	run(t, ctx, "log in read-only", chromedp.SendKeys("#token", "viewer-token-0123456789"), chromedp.Click("#login"), chromedp.WaitVisible("#total-due"))
	var actions int
	run(t, ctx, "open the dead set", chromedp.Navigate(srv.URL+"/ui/dead"), chromedp.WaitVisible(`tr[data-key="ro/dead-1"]`),
		chromedp.Evaluate(`document.querySelectorAll('button.requeue, button.cancel, #requeue-all, #cancel-all').length`, &actions))
	if actions != 0 {
		t.Errorf("the read-only session's dead set shows %d action buttons or links, want none", actions)
	}
	screenshot(t, ctx, filepath.Join(artifacts, "dashboard-read-only-dead.png"))
	run(t, ctx, "open the task", chromedp.Navigate(srv.URL+"/ui/task?key=ro%2Fdead-1"), chromedp.WaitVisible("#state"),
		chromedp.Evaluate(`document.querySelectorAll('button.requeue, button.cancel').length`, &actions))
	if actions != 0 {
		t.Errorf("the read-only session's task page shows %d action buttons, want none", actions)
	}
	run(t, ctx, "open the dead set's list", chromedp.Navigate(srv.URL+"/ui/tasks?state=dead&kind=all"), chromedp.WaitVisible(`tr[data-key="ro/dead-1"]`),
		chromedp.Evaluate(`document.querySelectorAll('input.select, #act-selected, #act-all').length`, &actions))
	if actions != 0 {
		t.Errorf("the read-only session's task list offers %d selection controls, want none", actions)
	}
	run(t, ctx, "open the overview", chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible("#total-due"),
		chromedp.Evaluate(`document.querySelectorAll('#pause, #resume').length`, &actions))
	if actions != 0 {
		t.Errorf("the read-only session's overview shows %d Pause/Resume links, want none", actions)
	}
	screenshot(t, ctx, filepath.Join(artifacts, "dashboard-read-only-overview.png"))
	// The actions themselves are refused to it (403): TestActionsShownToOperatorsOnly.
	if info, err := q.Get(context.Background(), "ro/dead-1"); err != nil || info.State != durable.StateDead {
		t.Errorf("ro/dead-1 after the read-only session: %+v, %v; want it still dead", info, err)
	}
}
