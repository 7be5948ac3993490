package dashboard

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
	"github.com/redis/go-redis/v9"
)

func TestNewRefusesIncompleteConfig(t *testing.T) {
	// New makes no call to Redis: a client of nothing will do.
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	q, err := rediswheel.New(c, rediswheel.Options{Namespace: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range []Config{{Auth: auth.New("t")}, {Queue: q}} {
		if _, err := New(cfg); !errors.Is(err, ErrConfig) {
			t.Errorf("New(%+v) = %v, want ErrConfig", cfg, err)
		}
	}
}

// Every page but the login form sends a browser without the session to it,
// and an action without the session does nothing.
func TestLoginRequired(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c)
	fixture(t, q, []string{"d1"}, nil, 0, 0)
	h := newDashboard(t, q)
	for _, path := range []string{"/ui/", "/ui/tasks?state=dead", "/ui/dead", "/ui/task?key=d1", "/ui/no-such-page"} {
		r := get(t, h, path, false)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/login" {
			t.Errorf("GET %s without a session: %d to %q, want 303 to /ui/login", path, r.status, r.header.Get("Location"))
		}
		if strings.Contains(r.body, "d1") {
			t.Errorf("GET %s without a session shows the task: %s", path, r.body)
		}
	}
	for _, path := range []string{"/ui/requeue", "/ui/cancel"} {
		r := post(t, h, path, url.Values{"key": {"d1"}, "from": {"dead"}}, false, nil)
		if r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/login" {
			t.Errorf("POST %s without a session: %d to %q, want 303 to /ui/login", path, r.status, r.header.Get("Location"))
		}
	}
	// A session cookie made with another token is no session.
	req := newRequest(t, http.MethodGet, "/ui/", nil, false)
	req.AddCookie(cookieOf(t, auth.New("another token")))
	if r := do(t, h, req); r.status != http.StatusSeeOther {
		t.Errorf("GET /ui/ with another token's cookie: %d, want 303", r.status)
	}
	if info, err := q.Get(context.Background(), "d1"); err != nil || info.State != rediswheel.StateDead {
		t.Fatalf("d1 after the refused actions: %+v, %v; want it still dead", info, err)
	}
}

func TestLoginAndLogout(t *testing.T) {
	h := newDashboard(t, newQueue(t, standalone(t)))

	r := get(t, h, "/ui/login", false)
	if r.status != http.StatusOK || !strings.Contains(r.body, `name="token"`) {
		t.Fatalf("GET /ui/login: %d %s", r.status, r.body)
	}
	r = post(t, h, "/ui/login", url.Values{"token": {"wrong"}}, false, nil)
	if r.status != http.StatusUnauthorized || r.header.Get("Set-Cookie") != "" || !strings.Contains(r.body, `id="wrong"`) {
		t.Fatalf("wrong token: %d, Set-Cookie %q, body %s; want 401, no cookie, the form again", r.status, r.header.Get("Set-Cookie"), r.body)
	}

	r = post(t, h, "/ui/login", url.Values{"token": {testToken}}, false, nil)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/" {
		t.Fatalf("right token: %d to %q, want 303 to /ui/", r.status, r.header.Get("Location"))
	}
	ck, err := http.ParseSetCookie(r.header.Get("Set-Cookie"))
	if err != nil || ck.Name != auth.CookieName || !ck.HttpOnly || ck.SameSite != http.SameSiteStrictMode {
		t.Fatalf("session cookie %+v (%v): want %s, HttpOnly, SameSite=Strict", ck, err, auth.CookieName)
	}
	// The login page says how long the session lasts, and the cookie does.
	if want := int(auth.SessionTTL / time.Second); ck.MaxAge != want {
		t.Errorf("session cookie MaxAge %d, want %d (auth.SessionTTL)", ck.MaxAge, want)
	}
	if page := get(t, h, "/ui/login", false).body; !strings.Contains(page, "lasts 12 hours from this login") {
		t.Errorf("the login page does not say the session lasts 12 hours (auth.SessionTTL):\n%s", page)
	}
	req := newRequest(t, http.MethodGet, "/ui/", nil, false)
	req.AddCookie(ck)
	if r := do(t, h, req); r.status != http.StatusOK || !strings.Contains(r.body, `id="total-due"`) {
		t.Fatalf("GET /ui/ with the login's cookie: %d %s", r.status, r.body)
	}

	if r := get(t, h, "/ui/logout", true); r.status != http.StatusOK || r.header.Get("Set-Cookie") != "" ||
		!strings.Contains(r.body, `<form method="post" action="/ui/logout">`) {
		t.Fatalf("GET /ui/logout: %d, Set-Cookie %q; want the button and the session kept", r.status, r.header.Get("Set-Cookie"))
	}
	r = post(t, h, "/ui/logout", nil, true, nil)
	if r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/login" {
		t.Fatalf("logout: %d to %q", r.status, r.header.Get("Location"))
	}
	if ck, err := http.ParseSetCookie(r.header.Get("Set-Cookie")); err != nil || ck.Name != auth.CookieName || ck.MaxAge >= 0 {
		t.Fatalf("logout's cookie %+v (%v): want %s cleared", ck, err, auth.CookieName)
	}
}

// The CSRF defence (csrf.go): a POST that carries a valid session but does
// not come from a page of this origin is refused with 403 and changes
// nothing, whichever header gives it away.
func TestCrossOriginPostsRefused(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c)
	fixture(t, q, []string{"victim"}, nil, 0, 0)
	h := newDashboard(t, q)
	type origin struct {
		name    string
		headers map[string]string // set on top of post's Origin of this origin; "" deletes
	}
	refused := []origin{
		{"Origin of another site", map[string]string{"Origin": "http://evil.test"}},
		{"Origin of another port", map[string]string{"Origin": "http://timerd.test:8081"}},
		{"Origin null", map[string]string{"Origin": "null"}},
		{"Sec-Fetch-Site cross-site", map[string]string{"Sec-Fetch-Site": "cross-site"}},
		// SameSite=Strict lets this one's cookie through: the origin check must not.
		{"Sec-Fetch-Site same-site (a sibling subdomain)", map[string]string{"Sec-Fetch-Site": "same-site"}},
		{"Referer of another site, no Origin", map[string]string{"Origin": "", "Referer": "http://evil.test/page"}},
		{"no Origin, Referer or Sec-Fetch-Site", map[string]string{"Origin": ""}},
	}
	for _, path := range []string{"/ui/cancel", "/ui/requeue", "/ui/logout", "/ui/login"} {
		for _, o := range refused {
			r := post(t, h, path, url.Values{"key": {"victim"}, "from": {"dead"}, "token": {testToken}}, true, o.headers)
			if r.status != http.StatusForbidden || r.header.Get("Set-Cookie") != "" {
				t.Errorf("POST %s, %s: %d (Set-Cookie %q), want 403 and no cookie", path, o.name, r.status, r.header.Get("Set-Cookie"))
			}
		}
	}
	if info, err := q.Get(context.Background(), "victim"); err != nil || info.State != rediswheel.StateDead {
		t.Fatalf("victim after the refused POSTs: %+v, %v; want it still dead", info, err)
	}

	// And the same form from the dashboard's own pages goes through.
	allowed := []origin{
		{"Origin of this origin", nil},
		// The Sec-Fetch-Site verdict stands even when a proxy rewrote Host.
		{"Sec-Fetch-Site same-origin", map[string]string{"Sec-Fetch-Site": "same-origin", "Origin": "https://public.example"}},
		{"Referer of this origin, no Origin", map[string]string{"Origin": "", "Referer": "http://timerd.test/ui/dead"}},
	}
	for _, o := range allowed {
		r := post(t, h, "/ui/requeue", url.Values{"key": {"victim"}, "from": {"dead"}}, true, o.headers)
		if r.status != http.StatusSeeOther {
			t.Errorf("POST /ui/requeue, %s: %d %s, want 303", o.name, r.status, r.body)
		}
	}
	if info, err := q.Get(context.Background(), "victim"); err != nil || info.State == rediswheel.StateDead {
		t.Fatalf("victim after a same-origin Requeue: %+v, %v; want it out of the dead set", info, err)
	}
}

// Without a token (allowed on loopback only: config's rule) the dashboard
// is open: no login, no logout button.
func TestOpenCheckerNeedsNoLogin(t *testing.T) {
	h, err := New(Config{Queue: newQueue(t, standalone(t)), Auth: auth.New("")})
	if err != nil {
		t.Fatal(err)
	}
	r := get(t, h, "/ui/", false)
	if r.status != http.StatusOK || strings.Contains(r.body, "Log out") {
		t.Fatalf("open dashboard: %d, a logout button: %v", r.status, strings.Contains(r.body, "Log out"))
	}
	if r := get(t, h, "/ui/login", false); r.status != http.StatusSeeOther || r.header.Get("Location") != "/ui/" {
		t.Fatalf("open dashboard's login: %d to %q, want 303 to /ui/", r.status, r.header.Get("Location"))
	}
}
