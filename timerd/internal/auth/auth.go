// Package auth checks timerd's bearer token. The API takes it in the
// Authorization header ("Bearer <token>"); the dashboard, which a browser
// cannot give a header, takes a session cookie set by its login page. The
// cookie holds the time of the login, a random nonce and an HMAC of both
// under a key derived from the token, never the token; it is HttpOnly and
// SameSite=Strict, so another site can neither read it nor make a browser
// send it with a cross-site request.
//
// A session ends SessionTTL after its login. The server keeps no sessions,
// so logging out only makes the browser forget its cookie: a cookie that
// leaked (copied from a browser profile, a proxy log) stays good until it
// expires. To end every session at once, change the token: each cookie's
// HMAC is under the token it was issued with.
package auth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"net/http"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
)

// CookieName is the dashboard's session cookie.
const CookieName = "timerd_session"

// SessionTTL is how long a dashboard session lasts from its login: a working
// day and then some, so that an operator logs in about once a day, and a
// leaked cookie is good for half a day at most.
const SessionTTL = 12 * time.Hour

// clockSkew is how far ahead of this process's clock a login time may be:
// another timerd of the namespace, behind the same load balancer, may have
// issued the cookie by a clock a little ahead.
const clockSkew = time.Minute

// A session cookie is base64url (no padding) of
//
//	issued (8 bytes, Unix seconds, big-endian) | nonce (16 bytes) | HMAC-SHA256 (32 bytes)
//
// the HMAC being of the first 24 bytes, under sessionKey.
const (
	nonceLen   = 16
	signedLen  = 8 + nonceLen
	sessionLen = signedLen + sha256.Size
)

// Checker checks requests against one token. A Checker with an empty token
// lets every request through: config refuses that on any address but
// loopback.
type Checker struct {
	token      []byte
	sessionKey []byte           // HMAC-SHA256 of a fixed label under the token
	now        func() time.Time // time.Now; tests move it
}

// New returns a Checker for token.
func New(token string) *Checker {
	c := &Checker{token: []byte(token), now: time.Now}
	if token != "" {
		m := hmac.New(sha256.New, c.token)
		m.Write([]byte("timerd dashboard session key v2"))
		c.sessionKey = m.Sum(nil)
	}
	return c
}

// sign returns the HMAC of a cookie's signed part.
func (c *Checker) sign(signed []byte) []byte {
	m := hmac.New(sha256.New, c.sessionKey)
	m.Write(signed)
	return m.Sum(nil)
}

// newSession returns a cookie value issued now.
func (c *Checker) newSession() string {
	b := make([]byte, signedLen, sessionLen)
	binary.BigEndian.PutUint64(b, uint64(c.now().Unix()))
	rand.Read(b[8:signedLen]) // crypto/rand.Read never fails (Go 1.24)
	return base64.RawURLEncoding.EncodeToString(append(b, c.sign(b)...))
}

// validSession reports whether v is a cookie this token issued, less than
// SessionTTL ago.
func (c *Checker) validSession(v string) bool {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(b) != sessionLen || !hmac.Equal(b[signedLen:], c.sign(b[:signedLen])) {
		return false
	}
	issued := time.Unix(int64(binary.BigEndian.Uint64(b)), 0)
	age := c.now().Sub(issued)
	return age < SessionTTL && age >= -clockSkew
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
		return c.validSession(ck.Value)
	}
	return false
}

// SetSession gives the browser a new session cookie; call it only after
// Token accepted what the user typed. The session, and the cookie in the
// browser, last SessionTTL; the cookie is Secure when r came over TLS.
func (c *Checker) SetSession(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: c.newSession(), Path: "/", MaxAge: int(SessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

// ClearSession removes the session cookie from the browser. The cookie's
// value stays good until SessionTTL after its login if it was copied
// elsewhere: nothing on the server remembers a logout.
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
