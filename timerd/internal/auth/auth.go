// Package auth checks timerd's bearer token. The API takes it in the
// Authorization header ("Bearer <token>"); the dashboard, which a browser
// cannot give a header, takes a session cookie set by its login page. The
// cookie holds an HMAC of the token, not the token, and is HttpOnly and
// SameSite=Strict, so another site can neither read it nor make a browser
// send it with a cross-site request.
package auth

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
)

// CookieName is the dashboard's session cookie.
const CookieName = "timerd_session"

// Checker checks requests against one token. A Checker with an empty token
// lets every request through: config refuses that on any address but
// loopback.
type Checker struct {
	token   []byte
	session string // hex HMAC-SHA256 of a fixed label under the token
}

// New returns a Checker for token.
func New(token string) *Checker {
	c := &Checker{token: []byte(token)}
	if token != "" {
		m := hmac.New(sha256.New, c.token)
		m.Write([]byte("timerd dashboard session v1"))
		c.session = hex.EncodeToString(m.Sum(nil))
	}
	return c
}

// Open reports whether the Checker lets everything through (no token).
func (c *Checker) Open() bool { return len(c.token) == 0 }

// Token reports whether t is the token, in constant time.
func (c *Checker) Token(t string) bool {
	return c.Open() || subtle.ConstantTimeCompare([]byte(t), c.token) == 1
}

// Valid reports whether r carries the token in its Authorization header or
// a valid session cookie.
func (c *Checker) Valid(r *http.Request) bool {
	if c.Open() {
		return true
	}
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, t, ok := strings.Cut(h, " ")
		return ok && strings.EqualFold(scheme, "Bearer") && c.Token(strings.TrimSpace(t))
	}
	if ck, err := r.Cookie(CookieName); err == nil {
		return subtle.ConstantTimeCompare([]byte(ck.Value), []byte(c.session)) == 1
	}
	return false
}

// SetSession gives the browser the session cookie; call it only after Token
// accepted what the user typed. The cookie lives as long as the browser
// session, and is Secure when r came over TLS.
func (c *Checker) SetSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: c.session, Path: "/",
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

// ClearSession removes the session cookie.
func (c *Checker) ClearSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// Wrap answers 401 (apierror.Unauthenticated, with a WWW-Authenticate
// challenge) to requests that are not Valid, and passes the rest to next.
func (c *Checker) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !c.Valid(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="timerd"`)
			apierror.Write(w, apierror.Unauthenticated, "", "missing or wrong bearer token")
			return
		}
		next.ServeHTTP(w, r)
	})
}
