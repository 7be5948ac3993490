// Package auth checks timerd's bearer tokens. Each token is a named
// Credential with a Role (roles.go): admin, operator, read-only or
// completion. The API takes a token in the Authorization header ("Bearer
// <token>"); the dashboard, which a browser cannot give a header, takes a
// session cookie set by its login page. The cookie holds the time of the
// login, a random nonce, the credential's name and an HMAC of all three
// under a key derived from that credential's token, never the token; it is
// HttpOnly and SameSite=Strict, so another site can neither read it nor
// make a browser send it with a cross-site request.
//
// A session ends SessionTTL after its login. The server keeps no sessions,
// so logging out only makes the browser forget its cookie: a cookie that
// leaked (copied from a browser profile, a proxy log) stays good until it
// expires. To end every session of a credential at once, change its token:
// each cookie's HMAC is under the token it was issued with, and a cookie
// of a name no longer configured is no session.
package auth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
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
//	issued (8 bytes, Unix seconds, big-endian) | nonce (16 bytes) | name (1..MaxNameLen bytes) | HMAC-SHA256 (32 bytes)
//
// the HMAC being of everything before it, under the named credential's
// session key. The name's length is what is left between the nonce and
// the HMAC.
const (
	nonceLen   = 16
	headLen    = 8 + nonceLen
	minSession = headLen + 1 + sha256.Size
)

// Checker checks requests against its credentials. A Checker without any
// lets every request through, as an admin: config refuses that on any
// address but loopback.
type Checker struct {
	creds []credential     // in configuration order
	now   func() time.Time // time.Now; tests move it
}

// credential is a Credential with its session key: HMAC-SHA256 of a fixed
// label under the token.
type credential struct {
	Credential
	sessionKey []byte
}

// ErrCredentials reports a bad list of credentials: a bad name, role or
// token, or a name or token given twice.
var ErrCredentials = errors.New("auth: bad credentials")

// New returns a Checker for one token, the admin credential named
// "admin"; "" gives an open Checker.
func New(token string) *Checker {
	if token == "" {
		return &Checker{now: time.Now}
	}
	c, err := NewCredentials([]Credential{{Name: "admin", Role: RoleAdmin, Token: token}})
	if err != nil {
		panic(err) // unreachable: one valid credential
	}
	return c
}

// NewCredentials returns a Checker for creds; an empty list gives an open
// Checker. Its errors wrap ErrCredentials and name the credential, never
// its token.
func NewCredentials(creds []Credential) (*Checker, error) {
	c := &Checker{now: time.Now}
	names, tokens := map[string]bool{}, map[string]bool{}
	for _, cr := range creds {
		if err := cr.check(); err != nil {
			return nil, err
		}
		if names[cr.Name] {
			return nil, fmt.Errorf("%w: name %q given twice", ErrCredentials, cr.Name)
		}
		if tokens[cr.Token] {
			return nil, fmt.Errorf("%w: %q has the token of another credential", ErrCredentials, cr.Name)
		}
		names[cr.Name], tokens[cr.Token] = true, true
		m := hmac.New(sha256.New, []byte(cr.Token))
		m.Write([]byte("timerd dashboard session key v3"))
		c.creds = append(c.creds, credential{Credential: cr, sessionKey: m.Sum(nil)})
	}
	return c, nil
}

// sign returns the HMAC of a cookie's signed part under key.
func sign(key, signed []byte) []byte {
	m := hmac.New(sha256.New, key)
	m.Write(signed)
	return m.Sum(nil)
}

// newSession returns a cookie value of cr issued now.
func (c *Checker) newSession(cr credential) string {
	b := make([]byte, headLen, headLen+len(cr.Name)+sha256.Size)
	binary.BigEndian.PutUint64(b, uint64(c.now().Unix()))
	rand.Read(b[8:headLen]) // crypto/rand.Read never fails (Go 1.24)
	b = append(b, cr.Name...)
	return base64.RawURLEncoding.EncodeToString(append(b, sign(cr.sessionKey, b)...))
}

// session returns the credential of cookie value v if it is a cookie that
// credential's token issued, less than SessionTTL ago.
func (c *Checker) session(v string) (Credential, bool) {
	b, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil || len(b) < minSession {
		return Credential{}, false
	}
	signed := b[:len(b)-sha256.Size]
	cr, ok := c.byName(string(signed[headLen:]))
	if !ok || !hmac.Equal(b[len(signed):], sign(cr.sessionKey, signed)) {
		return Credential{}, false
	}
	issued := time.Unix(int64(binary.BigEndian.Uint64(b)), 0)
	age := c.now().Sub(issued)
	return cr.Credential, age < SessionTTL && age >= -clockSkew
}

func (c *Checker) byName(name string) (credential, bool) {
	for _, cr := range c.creds {
		if cr.Name == name {
			return cr, true
		}
	}
	return credential{}, false
}

// Open reports whether the Checker lets everything through (no credential).
func (c *Checker) Open() bool { return len(c.creds) == 0 }

// openAdmin is who a request to an open Checker is.
var openAdmin = Credential{Name: "open", Role: RoleAdmin}

// Lookup returns the credential whose token is t. It compares t with every
// token in constant time, so the time taken says nothing of which, if any,
// matched.
func (c *Checker) Lookup(t string) (Credential, bool) {
	if c.Open() {
		return openAdmin, true
	}
	var found Credential
	ok := 0
	for _, cr := range c.creds {
		if subtle.ConstantTimeCompare([]byte(t), []byte(cr.Token)) == 1 {
			found, ok = cr.Credential, 1
		}
	}
	return found, ok == 1
}

// Token reports whether t is the token of a credential, in constant time.
func (c *Checker) Token(t string) bool {
	_, ok := c.Lookup(t)
	return ok
}

// Identify returns the credential of r: its Authorization header's bearer
// token if it has the header (a wrong one is no credential, whatever the
// cookie), else its session cookie.
func (c *Checker) Identify(r *http.Request) (Credential, bool) {
	if c.Open() {
		return openAdmin, true
	}
	if h := r.Header.Get("Authorization"); h != "" {
		scheme, t, ok := strings.Cut(h, " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return Credential{}, false
		}
		return c.Lookup(strings.TrimSpace(t))
	}
	if ck, err := r.Cookie(CookieName); err == nil {
		return c.session(ck.Value)
	}
	return Credential{}, false
}

// Valid reports whether r carries a credential's token in its
// Authorization header or a valid session cookie.
func (c *Checker) Valid(r *http.Request) bool {
	_, ok := c.Identify(r)
	return ok
}

// SetSessionAs gives the browser a new session cookie of cr; call it only
// after Lookup returned cr for what the user typed. The session, and the
// cookie in the browser, last SessionTTL; the cookie is Secure when r came
// over TLS. For an open Checker it does nothing.
func (c *Checker) SetSessionAs(w http.ResponseWriter, r *http.Request, cr Credential) {
	full, ok := c.byName(cr.Name)
	if !ok {
		return
	}
	http.SetCookie(w, &http.Cookie{
		Name: CookieName, Value: c.newSession(full), Path: "/", MaxAge: int(SessionTTL / time.Second),
		HttpOnly: true, SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil,
	})
}

// SetSession is SetSessionAs for the Checker's first credential (New's one
// token).
func (c *Checker) SetSession(w http.ResponseWriter, r *http.Request) {
	if !c.Open() {
		c.SetSessionAs(w, r, c.creds[0].Credential)
	}
}

// ClearSession removes the session cookie from the browser. The cookie's
// value stays good until SessionTTL after its login if it was copied
// elsewhere: nothing on the server remembers a logout.
func (c *Checker) ClearSession(w http.ResponseWriter) {
	http.SetCookie(w, &http.Cookie{Name: CookieName, Value: "", Path: "/", MaxAge: -1,
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

type ctxKey struct{}

// FromContext returns the credential Wrap found for the request of ctx
// (for an audit line, a permission check); false outside Wrap.
func FromContext(ctx context.Context) (Credential, bool) {
	cr, ok := ctx.Value(ctxKey{}).(Credential)
	return cr, ok
}

// WithCredential returns ctx carrying cr, as Wrap does.
func WithCredential(ctx context.Context, cr Credential) context.Context {
	return context.WithValue(ctx, ctxKey{}, cr)
}

// Wrap answers 401 (apierror.Unauthenticated, with a WWW-Authenticate
// challenge) to requests without a credential, and passes the rest to next
// with their credential in the context (FromContext): what a credential
// may do is next's to check (Role.Can).
func (c *Checker) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cr, ok := c.Identify(r)
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="timerd"`)
			apierror.Write(w, apierror.Unauthenticated, "", "missing or wrong bearer token")
			return
		}
		inner := r.WithContext(WithCredential(r.Context(), cr))
		next.ServeHTTP(w, inner)
		// A ServeMux in next sets the pattern it matched on inner; the
		// request metrics outside read it on r.
		r.Pattern = inner.Pattern
	})
}
