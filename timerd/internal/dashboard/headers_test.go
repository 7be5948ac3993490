package dashboard

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// Every response, page, redirect or error, logged in or not, carries the
// security headers; and the CSP's style hash is that of the page's <style>,
// or the browser would drop the CSS.
func TestSecurityHeaders(t *testing.T) {
	q := newQueue(t, standalone(t))
	h := newDashboard(t, q)
	responses := map[string]response{
		"login form":         get(t, h, "/ui/login", false),
		"redirect to login":  get(t, h, "/ui/", false),
		"overview":           get(t, h, "/ui/", true),
		"dead set":           get(t, h, "/ui/dead", true),
		"404":                get(t, h, "/ui/task?key=nope", true),
		"cross-origin POST":  post(t, h, "/ui/cancel", url.Values{"key": {"k"}}, true, map[string]string{"Origin": "http://evil.test"}),
		"wrong token":        post(t, h, "/ui/login", url.Values{"token": {"x"}}, false, nil),
		"action redirecting": post(t, h, "/ui/cancel", url.Values{"key": {"k"}, "from": {"dead"}, "confirm": {"yes"}}, true, nil),
		"confirmation page":  get(t, h, "/ui/pause", true),
		"schedules":          get(t, h, "/ui/schedules", true),
	}
	styleRE := regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	for name, r := range responses {
		for header, want := range map[string]string{
			"X-Frame-Options":        "DENY",
			"X-Content-Type-Options": "nosniff",
			"Referrer-Policy":        "same-origin",
			"Cache-Control":          "no-store",
		} {
			if got := r.header.Get(header); got != want {
				t.Errorf("%s: %s %q, want %q", name, header, got, want)
			}
		}
		policy := r.header.Get("Content-Security-Policy")
		for _, directive := range []string{"default-src 'none'", "frame-ancestors 'none'", "form-action 'self'"} {
			if !strings.Contains(policy, directive) {
				t.Errorf("%s: CSP %q lacks %s", name, policy, directive)
			}
		}
		if strings.Contains(policy, "script-src") || strings.Contains(policy, "unsafe") {
			t.Errorf("%s: CSP %q allows scripts or unsafe sources", name, policy)
		}
		if m := styleRE.FindStringSubmatch(r.body); m != nil {
			sum := sha256.Sum256([]byte(m[1]))
			if hash := "'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"; !strings.Contains(policy, "style-src "+hash) {
				t.Errorf("%s: the page's style hashes to %s, not allowed by CSP %q", name, hash, policy)
			}
		} else if r.status == http.StatusOK {
			t.Errorf("%s: a page without its style", name)
		}
		if strings.Contains(r.body, "<script") {
			t.Errorf("%s: a page with a script", name)
		}
	}
}
