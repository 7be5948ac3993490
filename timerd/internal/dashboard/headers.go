package dashboard

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
)

// csp allows the page its one inline <style> element, by the hash of its
// text (style.css, inserted by layout.html with nothing around it), and
// nothing else: no script from anywhere, no frames, no plugins; forms may
// post only to this origin, and <base> cannot redirect relative links. If
// layout.html wraps the style in anything, the hash no longer matches and
// the pages lose their CSS (TestSecurityHeaders checks it does not).
var csp = "default-src 'none'; style-src 'sha256-" + styleHash() + "'; img-src 'self'; " +
	"form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

func styleHash() string {
	h := sha256.Sum256([]byte(style))
	return base64.StdEncoding.EncodeToString(h[:])
}

// securityHeaders sets, on every response: the CSP above; X-Frame-Options
// DENY for browsers older than frame-ancestors (no clickjacking of the
// Requeue and Cancel buttons); nosniff; Referrer-Policy same-origin, so that
// task keys in our URLs do not leak to other sites while our own POSTs still
// carry the Referer that sameOrigin may need; and no-store, since pages show
// task data to whoever holds the session.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Frame-Options", "DENY")
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "same-origin")
		h.Set("Cache-Control", "no-store")
		next.ServeHTTP(w, r)
	})
}
