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

// A read-only token in the real browser: it logs in, reads the dead set, and
// its Requeue is refused (403, the error page naming the token and its
// role), the task still dead; a completion token is no login. Screenshots:
// dashboard-read-only-dead.png and dashboard-read-only-refused.png.
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
	run(t, ctx, "open the dead set", chromedp.Navigate(srv.URL+"/ui/dead"), chromedp.WaitVisible(`tr[data-key="ro/dead-1"]`))
	screenshot(t, ctx, filepath.Join(artifacts, "dashboard-read-only-dead.png"))
	var status, msg string
	run(t, ctx, "press Requeue", chromedp.Click(`tr[data-key="ro/dead-1"] button.requeue`, chromedp.NodeVisible),
		chromedp.WaitVisible("#error"), chromedp.AttributeValue("#error", "data-status", &status, nil), chromedp.Text("#error", &msg))
	if status != "403" || !strings.Contains(msg, "viewer") || !strings.Contains(msg, "read-only") {
		t.Errorf("Requeue with a read-only token: %s %q, want 403 naming viewer (read-only)", status, msg)
	}
	screenshot(t, ctx, filepath.Join(artifacts, "dashboard-read-only-refused.png"))
	if info, err := q.Get(context.Background(), "ro/dead-1"); err != nil || info.State != durable.StateDead {
		t.Errorf("ro/dead-1 after a read-only Requeue: %+v, %v; want it still dead", info, err)
	}
}
