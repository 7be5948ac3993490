package dashboard

import (
	"fmt"
	"net/http"
	"strings"
	"time"
)

// An operator's display preferences, kept in two cookies of this browser
// (not secrets, so neither signed nor tied to the session): the time zone
// pages show times in, and whether list pages reload themselves. The forms
// in every page's header POST them to /ui/prefs, which sets the cookie and
// goes back to the page.
const (
	zoneCookie    = "timerd_zone"
	refreshCookie = "timerd_refresh"
	// refreshEvery is the auto-refresh period: long enough that a page can
	// be read between reloads, short enough to watch a backlog drain.
	refreshEvery = 10
	// maxZoneName bounds a zone name (the longest IANA name is 32 bytes).
	maxZoneName = 64
)

// zones are the zones the picker suggests; any IANA name is accepted.
var zones = []string{"UTC", "America/Los_Angeles", "America/Denver", "America/Chicago", "America/New_York",
	"America/Sao_Paulo", "Europe/London", "Europe/Paris", "Europe/Berlin", "Europe/Moscow", "Africa/Johannesburg",
	"Asia/Dubai", "Asia/Kolkata", "Asia/Singapore", "Asia/Shanghai", "Asia/Tokyo", "Australia/Sydney", "Pacific/Auckland"}

// prefs are one request's preferences.
type prefs struct {
	Zone    string // an IANA name; "UTC" by default
	Refresh bool   // list pages reload every refreshEvery seconds
	Every   int    // refreshEvery, for the templates
	loc     *time.Location
}

// prefsOf reads r's cookies; a zone the system does not know reads as UTC.
func prefsOf(r *http.Request) prefs {
	p := prefs{Zone: "UTC", loc: time.UTC, Every: refreshEvery}
	if c, err := r.Cookie(zoneCookie); err == nil {
		if loc, err := loadZone(c.Value); err == nil {
			p.Zone, p.loc = c.Value, loc
		}
	}
	if c, err := r.Cookie(refreshCookie); err == nil && c.Value == "on" {
		p.Refresh = true
	}
	return p
}

// loadZone is time.LoadLocation for an operator's input: an IANA name, not
// "Local" (the server's zone means nothing to a browser elsewhere) nor "".
func loadZone(name string) (*time.Location, error) {
	if name == "" || name == "Local" || len(name) > maxZoneName {
		return nil, fmt.Errorf("%q is no time zone name", name)
	}
	return time.LoadLocation(name)
}

// backOf is r's path and query, if it is a page of the dashboard: where the
// preference forms go back to.
func backOf(r *http.Request) string {
	if r.Method != http.MethodGet {
		return "/ui/"
	}
	return r.URL.RequestURI()
}

// localPage is back if it names a page of this dashboard, else /ui/: the
// form's field is the browser's to send, so it must not be able to send the
// browser to another site ("//evil.test/ui/" is a URL of another host).
func localPage(back string) string {
	if !strings.HasPrefix(back, "/ui/") || strings.ContainsAny(back, "\\\r\n") {
		return "/ui/"
	}
	return back
}

// setPrefs is POST /ui/prefs: zone=<IANA name> and/or refresh=on|off, and
// back (the page to return to). An unknown zone is a 400, and changes
// nothing.
func (d *dashboard) setPrefs(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		d.fail(w, r, http.StatusBadRequest, "Unreadable form: "+err.Error())
		return
	}
	var cookies []*http.Cookie
	if z, ok := r.PostForm["zone"]; ok {
		name := strings.TrimSpace(z[0])
		if _, err := loadZone(name); err != nil {
			d.fail(w, r, http.StatusBadRequest, "No time zone "+name+": give an IANA name such as Europe/Paris or UTC.")
			return
		}
		cookies = append(cookies, prefCookie(zoneCookie, name))
	}
	switch v := r.PostForm.Get("refresh"); v {
	case "on", "off":
		cookies = append(cookies, prefCookie(refreshCookie, v))
	case "":
	default:
		d.fail(w, r, http.StatusBadRequest, "refresh must be on or off.")
		return
	}
	for _, c := range cookies {
		http.SetCookie(w, c)
	}
	http.Redirect(w, r, localPage(r.PostForm.Get("back")), http.StatusSeeOther)
}

func prefCookie(name, value string) *http.Cookie {
	return &http.Cookie{Name: name, Value: value, Path: "/ui/", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, SameSite: http.SameSiteStrictMode}
}

// relative says how far t is from now, in its largest unit, rounded down:
// "in 5m", "3h ago", "now" within a second.
func relative(t, now time.Time) string {
	d := t.Sub(now)
	if d > -time.Second && d < time.Second {
		return "now"
	}
	a := d.Abs()
	var s string
	switch {
	case a < time.Minute:
		s = fmt.Sprintf("%ds", int(a/time.Second))
	case a < time.Hour:
		s = fmt.Sprintf("%dm", int(a/time.Minute))
	case a < 48*time.Hour:
		s = fmt.Sprintf("%dh", int(a/time.Hour))
	default:
		s = fmt.Sprintf("%dd", int(a/(24*time.Hour)))
	}
	if d > 0 {
		return "in " + s
	}
	return s + " ago"
}
