package dashboard

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// roleCredentials are an admin, an operator and a read-only credential.
var roleCredentials = []auth.Credential{
	{Name: "root", Role: auth.RoleAdmin, Token: testToken},
	{Name: "ops", Role: auth.RoleOperator, Token: "ops-token-0123456789"},
	{Name: "viewer", Role: auth.RoleReadOnly, Token: "viewer-token-0123456789"},
}

func roleChecker(t testing.TB) *auth.Checker {
	t.Helper()
	c, err := auth.NewCredentials(roleCredentials)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// cookieAs is the session cookie c sets for cr.
func cookieAs(t testing.TB, c *auth.Checker, cr auth.Credential) *http.Cookie {
	t.Helper()
	rec := httptest.NewRecorder()
	c.SetSessionAs(rec, httptest.NewRequest(http.MethodPost, "/ui/login", nil), cr)
	ck, err := http.ParseSetCookie(rec.Header().Get("Set-Cookie"))
	if err != nil {
		t.Fatal(err)
	}
	return ck
}

// postAs is post with cr's session cookie.
func postAs(t testing.TB, h http.Handler, ck *http.Cookie, path string, form url.Values) response {
	t.Helper()
	req := newRequest(t, http.MethodPost, path, strings.NewReader(form.Encode()), false)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", "http://"+req.Host)
	req.AddCookie(ck)
	return do(t, h, req)
}

// The buttons and links of actions appear only to roles that may use them:
// a read-only session sees none (no Requeue, Cancel, bulk or Pause), an
// operator's and an admin's see them all; an action posted anyway by a
// read-only session is refused with 403 and changes nothing.
func TestActionsShownToOperatorsOnly(t *testing.T) {
	q := newQueue(t, standalone(t))
	fixture(t, q, []string{"roles/dead-1"}, nil, 0, 0)
	checker := roleChecker(t)
	h := newDashboardWith(t, Config{Queue: q, Auth: checker})
	marks := map[string]string{ // page → the mark of an action on it
		"/ui/":                          `id="pause"`,
		"/ui/dead":                      `id="requeue-all"`,
		"/ui/dead#row":                  `<button class="requeue">`,
		"/ui/task?key=roles/dead-1":     `<button class="cancel">`,
		"/ui/tasks?state=dead&kind=all": `id="act-all"`,
		// A confirmation reached by its URL: no form for a read-only reader.
		"/ui/pause":            `id="confirm"`,
		"/ui/dead/requeue-all": `id="confirm"`,
		"/ui/select?state=dead&kind=all&op=cancel&scope=all": `id="confirm"`,
	}
	for _, cr := range roleCredentials {
		ck := cookieAs(t, checker, cr)
		for path, mark := range marks {
			path, _, _ = strings.Cut(path, "#")
			req := newRequest(t, http.MethodGet, path, nil, false)
			req.AddCookie(ck)
			r := do(t, h, req)
			if r.status != http.StatusOK {
				t.Fatalf("%s GET %s: %d", cr.Name, path, r.status)
			}
			if want := cr.Role != auth.RoleReadOnly; strings.Contains(r.body, mark) != want {
				t.Errorf("%s (%s) GET %s: shows %s: %v, want %v", cr.Name, cr.Role, path, mark, !want, want)
			}
		}
	}
	r := postAs(t, h, cookieAs(t, checker, roleCredentials[2]), "/ui/requeue", url.Values{"key": {"roles/dead-1"}, "from": {"dead"}})
	if r.status != http.StatusForbidden || !strings.Contains(r.body, "viewer") {
		t.Errorf("read-only Requeue: %d, want 403 naming the token: %s", r.status, r.body)
	}
	if info, err := q.Get(context.Background(), "roles/dead-1"); err != nil || info.State != durable.StateDead {
		t.Errorf("roles/dead-1 after a read-only Requeue: %+v, %v; want it still dead", info, err)
	}
}

// Each dashboard action writes the one audit line (auth.Audit) with the
// session's token name, as the API's routes do.
func TestDashboardActionsAudited(t *testing.T) {
	q := newQueue(t, standalone(t))
	fixture(t, q, []string{"audit/dead-1"}, nil, 0, 0)
	checker := roleChecker(t)
	var logs bytes.Buffer
	h := newDashboardWith(t, Config{Queue: q, Auth: checker, Log: slog.New(slog.NewTextHandler(&logs, nil))})
	r := postAs(t, h, cookieAs(t, checker, roleCredentials[1]), "/ui/requeue", url.Values{"key": {"audit/dead-1"}, "from": {"dead"}})
	if r.status != http.StatusSeeOther {
		t.Fatalf("Requeue: %d %s", r.status, r.body)
	}
	line := logs.String()
	for _, want := range []string{"msg=audit", "token=ops", "role=operator", `action="dashboard Requeue"`, "key=audit/dead-1"} {
		if !strings.Contains(line, want) {
			t.Errorf("audit line lacks %s: %s", want, line)
		}
	}
}
