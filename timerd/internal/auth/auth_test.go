package auth

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func request(header, cookie string) *http.Request {
	r := httptest.NewRequest("GET", "/v1/tasks", nil)
	if header != "" {
		r.Header.Set("Authorization", header)
	}
	if cookie != "" {
		r.AddCookie(&http.Cookie{Name: CookieName, Value: cookie})
	}
	return r
}

// session returns the cookie value SetSession gives.
func session(t *testing.T, c *Checker) string {
	w := httptest.NewRecorder()
	c.SetSession(w, httptest.NewRequest("POST", "/ui/login", nil))
	cookies := w.Result().Cookies()
	require.Len(t, cookies, 1)
	ck := cookies[0]
	assert.True(t, ck.HttpOnly)
	assert.Equal(t, http.SameSiteStrictMode, ck.SameSite)
	assert.NotEqual(t, "s3cret", ck.Value, "the cookie must not carry the token itself")
	return ck.Value
}

func TestValid(t *testing.T) {
	c := New("s3cret")
	other := New("other")
	for _, tc := range []struct {
		name           string
		header, cookie string
		want           bool
	}{
		{"no credentials", "", "", false},
		{"bearer", "Bearer s3cret", "", true},
		{"bearer, scheme in other case", "bearer s3cret", "", true},
		{"wrong token", "Bearer s3cre", "", false},
		{"token with a suffix", "Bearer s3cret2", "", false},
		{"basic scheme", "Basic s3cret", "", false},
		{"no scheme", "s3cret", "", false},
		{"session cookie", "", session(t, c), true},
		{"another token's cookie", "", session(t, other), false},
		{"the token as a cookie", "", "s3cret", false},
		{"a wrong header beats a good cookie", "Bearer nope", session(t, c), false},
	} {
		assert.Equal(t, tc.want, c.Valid(request(tc.header, tc.cookie)), tc.name)
	}
}

func TestOpenCheckerLetsEverythingThrough(t *testing.T) {
	c := New("")
	assert.True(t, c.Open())
	assert.True(t, c.Valid(request("", "")))
	assert.True(t, c.Token("anything"))
	assert.False(t, New("x").Open())
}

func TestWrap(t *testing.T) {
	h := New("s3cret").Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusTeapot)
	}))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, request("", ""))
	assert.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Equal(t, `Bearer realm="timerd"`, w.Header().Get("WWW-Authenticate"))
	assert.JSONEq(t, `{"error":{"code":"unauthenticated","message":"missing or wrong bearer token"}}`, w.Body.String())

	w = httptest.NewRecorder()
	h.ServeHTTP(w, request("Bearer s3cret", ""))
	assert.Equal(t, http.StatusTeapot, w.Code)
}

func TestClearSession(t *testing.T) {
	w := httptest.NewRecorder()
	New("s3cret").ClearSession(w)
	cookies := w.Result().Cookies()
	require.Len(t, cookies, 1)
	assert.Equal(t, CookieName, cookies[0].Name)
	assert.Less(t, cookies[0].MaxAge, 0)
}

// A session is good for SessionTTL from its login, and no longer: a cookie
// that leaked stops working by itself, even though logging out cannot
// revoke it (the server keeps no sessions).
func TestSessionsExpire(t *testing.T) {
	c := New("s3cret")
	login := time.Date(2026, 11, 25, 10, 0, 0, 0, time.UTC)
	now := login
	c.now = func() time.Time { return now }
	w := httptest.NewRecorder()
	c.SetSession(w, httptest.NewRequest("POST", "/ui/login", nil))
	ck := w.Result().Cookies()[0]
	assert.Equal(t, int(SessionTTL/time.Second), ck.MaxAge, "the browser forgets it when it expires")
	for _, tc := range []struct {
		at   time.Duration // after the login
		want bool
	}{
		{0, true}, {time.Hour, true}, {SessionTTL - time.Second, true},
		{SessionTTL, false}, {SessionTTL + time.Hour, false}, {365 * 24 * time.Hour, false},
		{-time.Minute, true}, {-2 * time.Minute, false}, // issued ahead of this clock: a minute of skew
	} {
		now = login.Add(tc.at)
		assert.Equal(t, tc.want, c.Valid(request("", ck.Value)), "%v after the login", tc.at)
	}
}

// Each login gets a cookie of its own (a nonce beside the time), and a
// cookie whose time or nonce was changed is no session.
func TestSessionsAreUniqueAndSigned(t *testing.T) {
	c := New("s3cret")
	a, b := session(t, c), session(t, c)
	assert.NotEqual(t, a, b, "two logins, one cookie")
	raw, err := base64.RawURLEncoding.DecodeString(a)
	require.NoError(t, err)
	for i := range raw {
		bad := bytes.Clone(raw)
		bad[i] ^= 1
		assert.False(t, c.Valid(request("", base64.RawURLEncoding.EncodeToString(bad))), "byte %d changed", i)
	}
	assert.False(t, c.Valid(request("", a[:len(a)-1])), "cut short")
	assert.False(t, c.Valid(request("", a+"A")), "lengthened")
}
