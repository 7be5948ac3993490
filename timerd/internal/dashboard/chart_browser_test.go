package dashboard

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/chromedp"
)

// The overview's processed/failed chart in real Chromium, under the
// dashboard's CSP (no script): the SVG is drawn, one group per minute, with
// the totals beside it. Screenshot: dashboard-throughput.png in
// $TIMERD_ARTIFACTS.
func TestBrowserThroughput(t *testing.T) {
	if _, err := os.Stat(chromium); err != nil {
		required(t, chromium+" is missing (scripts/chromium.sh installs it)")
	}
	q := newQueue(t, nil)
	now := time.Now()
	c := &clock{t: now.Add(-45 * time.Minute)}
	tp := NewThroughput(c.now) // started 45 minutes ago: the minutes before are shaded
	// A steady trickle, then a storm of deaths (issue 31: 29 in two
	// minutes), then the trickle again.
	for m := 44; m >= 0; m-- {
		c.t = now.Add(-time.Duration(m) * time.Minute)
		finished(tp, "done", 8+m%5)
		switch m {
		case 20, 19:
			finished(tp, "dead", 15)
		case 18:
			finished(tp, "retry", 4)
		}
	}
	srv := httptest.NewServer(newDashboardWith(t, Config{Queue: q, Throughput: tp}))
	defer srv.Close()
	artifacts := os.Getenv("TIMERD_ARTIFACTS")
	if artifacts == "" {
		artifacts = t.TempDir()
	}
	ctx, cancel := browser(t)
	defer cancel()
	run(t, ctx, "log in", chromedp.Navigate(srv.URL+"/ui/"), chromedp.WaitVisible("#token"),
		chromedp.SendKeys("#token", testToken), chromedp.Click("#login"), chromedp.WaitVisible("#throughput"))
	var groups, failedBars []*cdp.Node
	var processed, failed string
	run(t, ctx, "read the chart", chromedp.Nodes("#throughput g.minute", &groups, chromedp.ByQueryAll),
		chromedp.Nodes("#throughput rect.failed", &failedBars, chromedp.ByQueryAll),
		chromedp.Text("#throughput-processed", &processed), chromedp.Text("#throughput-failed", &failed))
	if len(groups) != throughputMinutes || len(failedBars) != 3 {
		t.Errorf("%d minutes drawn with %d failed bars; want %d and 3", len(groups), len(failedBars), throughputMinutes)
	}
	if processed != "484" || failed != "34" {
		t.Errorf("totals %q processed, %q failed; want 484 and 34", processed, failed)
	}
	screenshot(t, ctx, filepath.Join(artifacts, "dashboard-throughput.png"))
}
