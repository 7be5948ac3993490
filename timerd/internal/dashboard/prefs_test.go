package dashboard

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// The zone form sets a cookie, and times then read in that zone; a zone the
// system does not know changes nothing; the form goes back only to pages of
// the dashboard.
func TestZonePreference(t *testing.T) {
	q := newQueue(t, standalone(t))
	fixture(t, q, []string{"dead/1"}, nil, 0, 0)
	h := newDashboard(t, q)

	r := post(t, h, "/ui/prefs", url.Values{"zone": {"Asia/Tokyo"}, "back": {"/ui/task?key=dead/1"}}, true, nil)
	checkRedirect(t, r, "/ui/task?key=dead/1")
	zone, err := http.ParseSetCookie(r.header.Get("Set-Cookie"))
	if err != nil || zone.Name != zoneCookie || zone.Value != "Asia/Tokyo" || !zone.HttpOnly || zone.SameSite != http.SameSiteStrictMode {
		t.Fatalf("zone cookie %+v, %v", zone, err)
	}
	info, err := q.Get(t.Context(), "dead/1")
	if err != nil {
		t.Fatal(err)
	}
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	inTokyo := getWith(t, h, "/ui/task?key=dead/1", zone).body
	mustContain(t, "task page in Tokyo", inTokyo, info.Finished.In(tokyo).Format("2006-01-02 15:04:05.000")+"&#43;09:00, ",
		`<input name="zone" id="zone" list="zones" value="Asia/Tokyo"`)
	mustNotContain(t, "task page in Tokyo", inTokyo, info.Finished.UTC().Format("15:04:05.000Z"))
	mustContain(t, "task page in UTC", get(t, h, "/ui/task?key=dead/1", true).body, info.Finished.UTC().Format("2006-01-02 15:04:05.000Z")+", ")

	for _, bad := range []string{"Mars/Olympus", "Local", "../../etc/passwd", ""} {
		r := post(t, h, "/ui/prefs", url.Values{"zone": {bad}, "back": {"/ui/"}}, true, nil)
		if r.status != http.StatusBadRequest || r.header.Get("Set-Cookie") != "" {
			t.Errorf("zone %q: %d, Set-Cookie %q; want 400 and none", bad, r.status, r.header.Get("Set-Cookie"))
		}
	}
	// A cookie set otherwise with a bad zone reads as UTC.
	mustContain(t, "bad zone cookie", getWith(t, h, "/ui/", &http.Cookie{Name: zoneCookie, Value: "Mars/Olympus"}).body, `value="UTC"`)
	for _, back := range []string{"//evil.test/ui/", "https://evil.test/ui/", "/elsewhere", "/ui/\\evil"} {
		checkRedirect(t, post(t, h, "/ui/prefs", url.Values{"zone": {"UTC"}, "back": {back}}, true, nil), "/ui/")
	}
}

// Auto-refresh: off by default; the toggle turns on a meta refresh on the
// list pages only, never on a task's page or a confirmation.
func TestAutoRefresh(t *testing.T) {
	q := newQueue(t, standalone(t))
	fixture(t, q, []string{"dead/1"}, nil, 0, 0)
	h := newDashboard(t, q)
	const meta = `<meta http-equiv="refresh" content="10">`

	over := get(t, h, "/ui/", true).body
	mustNotContain(t, "overview by default", over, meta)
	mustContain(t, "overview by default", over, `<input type="hidden" name="refresh" value="on"><button id="refresh" data-on="off">`)
	r := post(t, h, "/ui/prefs", url.Values{"refresh": {"on"}, "back": {"/ui/dead"}}, true, nil)
	checkRedirect(t, r, "/ui/dead")
	on, err := http.ParseSetCookie(r.header.Get("Set-Cookie"))
	if err != nil || on.Name != refreshCookie || on.Value != "on" {
		t.Fatalf("refresh cookie %+v, %v", on, err)
	}
	for _, path := range []string{"/ui/", "/ui/dead", "/ui/tasks?state=dead", "/ui/schedules"} {
		mustContain(t, path+" with auto-refresh", getWith(t, h, path, on).body, meta, `<button id="refresh" data-on="on">Auto-refresh every 10 s: turn off`)
	}
	for _, path := range []string{"/ui/task?key=dead/1", "/ui/cancel?key=dead/1&from=dead", "/ui/pause"} {
		mustNotContain(t, path+" with auto-refresh", getWith(t, h, path, on).body, meta, `id="refresh"`)
	}
	if r := post(t, h, "/ui/prefs", url.Values{"refresh": {"sometimes"}}, true, nil); r.status != http.StatusBadRequest {
		t.Errorf("refresh=sometimes: %d, want 400", r.status)
	}
}

// The title names the page and timerd, and the namespace unless it is
// timerd's default, "timerd" (it read "timerd timerd").
func TestPageTitle(t *testing.T) {
	q := newQueue(t, standalone(t))
	for ns, want := range map[string]string{"timerd": "<title>Overview · timerd</title>", "orders": "<title>Overview · timerd · orders</title>"} {
		body := get(t, newDashboardWith(t, Config{Queue: q, Namespace: ns}), "/ui/", true).body
		if !strings.Contains(body, want) {
			t.Errorf("namespace %s: want %s in\n%.400s", ns, want, body)
		}
	}
}

// Relative times: the largest unit, rounded down, ahead or ago.
func TestRelative(t *testing.T) {
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	for d, want := range map[time.Duration]string{
		0: "now", 999 * time.Millisecond: "now", -999 * time.Millisecond: "now",
		5 * time.Second: "in 5s", 90 * time.Minute: "in 1h", 5*time.Minute + 59*time.Second: "in 5m", -3*time.Hour - 59*time.Minute: "3h ago",
		47 * time.Hour: "in 47h", -50 * time.Hour: "2d ago", 30 * 24 * time.Hour: "in 30d",
	} {
		if got := relative(now.Add(d), now); got != want {
			t.Errorf("relative(%v) = %q, want %q", d, got, want)
		}
	}
}

// Attempts read n/max on every list, the Queue's max for a task without its own.
func TestAttemptsOfMax(t *testing.T) {
	q := newQueue(t, standalone(t))
	fixture(t, q, []string{"dead/1"}, nil, 0, 0)
	h := newDashboard(t, q)
	for _, path := range []string{"/ui/dead", "/ui/tasks?state=dead"} {
		mustContain(t, path, get(t, h, path, true).body, `<td class="n">1/25</td>`)
	}
	if got := cellsByID(get(t, h, "/ui/task?key=dead/1", true).body)["attempts"]; got != "1/25" {
		t.Errorf("task page attempts %q, want 1/25", got)
	}
}
