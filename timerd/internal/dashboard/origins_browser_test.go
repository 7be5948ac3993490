package dashboard

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// The origins a worker holds, in real Chromium: the overview's origins
// table shows the open breaker, running/limit, waiting and held until, and
// the page of the task parked behind it says why it waits. Screenshots:
// dashboard-origins.png and dashboard-task-held.png in $TIMERD_ARTIFACTS.
func TestBrowserOrigins(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		required(t, chromium+" is missing (scripts/chromium.sh installs it)")
	}
	q, flow, origin := heldOrigin(t)
	srv := httptest.NewServer(newDashboardWith(t, Config{Queue: q, Flow: flow}))
	defer srv.Close()
	artifacts := os.Getenv("TIMERD_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	ctx, cancel := browser(t)
	defer cancel()
	run(t, ctx, "log in", chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", testToken), chromedp.Click("#login"), chromedp.WaitVisible("#origins"))
	var name, breaker, running, waiting, held string
	run(t, ctx, "read the origins", chromedp.Text("#origin-0", &name), chromedp.Text("#origin-0-breaker", &breaker),
		chromedp.Text("#origin-0-running", &running), chromedp.Text("#origin-0-waiting", &waiting),
		chromedp.Text("#origin-0-held", &held))
	if name != origin || breaker != "open" || running != "0/3" || waiting != "1" || held == "" {
		t.Errorf("origins row: %q %q %q %q %q", name, breaker, running, waiting, held)
	}
	screenshot(t, ctx, filepath.Join(artifacts, "dashboard-origins.png"))

	var line string
	run(t, ctx, "open the parked task", chromedp.Navigate(srv.URL+"/ui/task?key=parked"), chromedp.WaitVisible("#held"),
		chromedp.Text("#held", &line))
	if !strings.HasPrefix(line, "waiting: origin "+origin+" breaker open until ") {
		t.Errorf("held line %q", line)
	}
	screenshot(t, ctx, filepath.Join(artifacts, "dashboard-task-held.png"))
}
