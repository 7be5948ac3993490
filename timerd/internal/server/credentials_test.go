package server

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
)

// acceptingHook is a receiver answering 202 Accepted, whose calls arrive
// on the returned channel.
func acceptingHook(t *testing.T) (*httptest.Server, <-chan accepted) {
	calls := make(chan accepted, 16)
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls <- accepted{r.Header.Get(durable.HeaderIdempotencyKey), r.Header.Get(durable.HeaderCompletionToken), r.Header.Get(durable.HeaderAttempt)}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(hook.Close)
	return hook, calls
}

func nextCall(t *testing.T, calls <-chan accepted, key string) accepted {
	t.Helper()
	select {
	case c := <-calls:
		if key != "" {
			require.Equal(t, key, c.key)
		}
		require.NotEmpty(t, c.token, "X-Completion-Token")
		return c
	case <-time.After(redistest.WaitBound):
		t.Fatalf("waited %v for the callback of %s", redistest.WaitBound, key)
		panic("unreachable")
	}
}

// durableToken is the "<partition>.<store token>" inside a completion
// credential ("v1:<attempt>:<token>:<MAC>"), or the header itself if it is
// the bare durable token (as timerd sent before credentials).
func durableToken(header string) string {
	if parts := strings.Split(header, ":"); len(parts) == 4 && parts[0] == "v1" {
		return parts[2]
	}
	return header
}

// A completion credential completes its own delivery only, and cannot be
// made or changed by a caller, on every store: the bare durable token (a
// counter on the SQL stores), issue 31's forged
// "<partition>.1.2147483647.2147483647.<store token>", the credential of
// another task, one with its attempt changed and one with another's MAC
// are refused (400 naming token) and leave the task in flight; the real
// one completes it, and the same again (a replay) is 409.
func TestCompletionCredentialUnforgeable(t *testing.T) {
	eachStore(t, func(t *testing.T, cfg config.Config) {
		hook, calls := acceptingHook(t)
		cfg.AllowCallback = []string{hook.Listener.Addr().String()}
		cfg.Retention = time.Hour
		base, stop := runServer(t, cfg)
		defer stop()
		for _, key := range []string{"a", "b"} {
			code, out := apiCall(t, base, cfg.Token, "POST", "/v1/tasks", map[string]any{"key": key, "delay": "0s",
				"callback": map[string]any{"url": hook.URL + "/work", "method": "POST", "completion_timeout": "1h"}})
			require.Equal(t, http.StatusCreated, code, "%v", out)
		}
		got := map[string]accepted{}
		for range 2 {
			c := nextCall(t, calls, "")
			got[c.key] = c
		}
		a, b := got["a"].token, got["b"].token
		tok := durableToken(a)
		partition, store, _ := strings.Cut(tok, ".")
		forged := map[string]string{
			"the bare durable token":      tok,
			"issue 31's forged attempt":   partition + ".1.2147483647.2147483647." + store,
			"b's credential":              b,
			"another attempt":             strings.Replace(a, "v1:1:", "v1:2:", 1),
			"b's MAC on a's token":        a[:strings.LastIndex(a, ":")+1] + b[strings.LastIndex(b, ":")+1:],
			"a's credential, one bit off": a[:len(a)-1] + string(a[len(a)-1]^1),
		}
		for what, token := range forged {
			code, out := apiCall(t, base, cfg.Token, "POST", "/v1/tasks/a/complete", map[string]string{"token": token})
			require.Equal(t, http.StatusBadRequest, code, "%s (%s): %v", what, token, out)
			assert.Equal(t, "token", out["error"].(map[string]any)["field"], what)
		}
		_, out := apiCall(t, base, cfg.Token, "GET", "/v1/tasks/a", nil)
		require.Equal(t, "in_flight", out["state"], "no forgery touched a")

		code, out := apiCall(t, base, cfg.Token, "POST", "/v1/tasks/a/complete", map[string]string{"token": a})
		require.Equal(t, http.StatusOK, code, "%v", out)
		assert.Equal(t, "done", out["state"])
		code, out = apiCall(t, base, cfg.Token, "POST", "/v1/tasks/a/complete", map[string]string{"token": a})
		assert.Equal(t, http.StatusConflict, code, "a replay: %v", out)
		code, out = apiCall(t, base, cfg.Token, "POST", "/v1/tasks/b/fail", map[string]any{"token": b, "error": "gone", "permanent": true})
		require.Equal(t, http.StatusOK, code, "%v", out)
		assert.Equal(t, "dead", out["state"])
	})
}

// Named tokens grant what their role says (auth.Role), on the API and the
// dashboard: a read-only token reads and is refused every change (403
// permission_denied, nothing stored); a completion token completes a
// delivery with its credential and does nothing else; an operator changes
// tasks but not flow limits; the admin does all.
func TestTokenRoles(t *testing.T) {
	cfg := sqliteConfig(t)
	cfg.Token = ""
	cfg.Tokens = []auth.Credential{
		{Name: "root", Role: auth.RoleAdmin, Token: "admin-token-0123456789"},
		{Name: "ops", Role: auth.RoleOperator, Token: "operator-token-0123456789"},
		{Name: "viewer", Role: auth.RoleReadOnly, Token: "reader-token-0123456789"},
		{Name: "receiver", Role: auth.RoleCompletion, Token: "completion-token-0123456789"},
	}
	const admin, ops, viewer, receiver = "admin-token-0123456789", "operator-token-0123456789", "reader-token-0123456789", "completion-token-0123456789"
	hook, calls := acceptingHook(t)
	cfg.AllowCallback = []string{hook.Listener.Addr().String()}
	base, stop := runServer(t, cfg)
	defer stop()
	create := func(token, key string) (int, map[string]any) {
		return apiCall(t, base, token, "POST", "/v1/tasks", map[string]any{"key": key, "delay": "0s",
			"callback": map[string]any{"url": hook.URL + "/work", "method": "POST", "completion_timeout": "1h"}})
	}
	limit := "/v1/limits/" + url.PathEscape("https://api.example.com")
	denied := func(code int, out map[string]any, what string) {
		t.Helper()
		require.Equal(t, http.StatusForbidden, code, "%s: %v", what, out)
		assert.Equal(t, "permission_denied", out["error"].(map[string]any)["code"], what)
	}

	for _, tok := range []string{viewer, receiver} {
		code, out := create(tok, "refused")
		denied(code, out, "create")
		code, out = apiCall(t, base, tok, "DELETE", "/v1/tasks/refused", nil)
		denied(code, out, "cancel")
		code, out = apiCall(t, base, tok, "POST", "/v1/dead/refused/requeue", nil)
		denied(code, out, "requeue")
		code, out = apiCall(t, base, tok, "PUT", limit, map[string]any{"concurrency": 1})
		denied(code, out, "put limit")
	}
	code, out := apiCall(t, base, admin, "GET", "/v1/tasks/refused", nil)
	require.Equal(t, http.StatusNotFound, code, "nothing stored by a refused create: %v", out)

	code, out = apiCall(t, base, viewer, "GET", "/v1/stats", nil)
	require.Equal(t, http.StatusOK, code, "%v", out)
	code, out = apiCall(t, base, receiver, "GET", "/v1/stats", nil)
	denied(code, out, "a completion token reads nothing")

	code, out = create(ops, "job")
	require.Equal(t, http.StatusCreated, code, "%v", out)
	code, out = apiCall(t, base, ops, "PUT", limit, map[string]any{"concurrency": 1})
	denied(code, out, "an operator's put limit")
	code, out = apiCall(t, base, admin, "PUT", limit, map[string]any{"concurrency": 1})
	require.Equal(t, http.StatusOK, code, "%v", out)

	c := nextCall(t, calls, "job")
	code, out = apiCall(t, base, viewer, "POST", "/v1/tasks/job/complete", map[string]string{"token": c.token})
	denied(code, out, "a read-only token's complete")
	code, out = apiCall(t, base, receiver, "POST", "/v1/tasks/job/complete", map[string]string{"token": c.token})
	require.Equal(t, http.StatusOK, code, "%v", out)
	assert.Equal(t, "done", out["state"])

	// The dashboard: the read-only token logs in and reads, and is refused
	// an action; the completion token is no login.
	jar := dashboardLogin(t, base, viewer)
	require.NotNil(t, jar)
	assert.Equal(t, http.StatusOK, dashboardDo(t, base, jar, "GET", "/ui/", nil))
	assert.Equal(t, http.StatusForbidden, dashboardDo(t, base, jar, "POST", "/ui/pause", url.Values{"confirm": {"yes"}}))
	assert.Nil(t, dashboardLogin(t, base, receiver), "a completion token is no dashboard login")
	opsJar := dashboardLogin(t, base, ops)
	require.NotNil(t, opsJar)
	assert.Equal(t, http.StatusOK, dashboardDo(t, base, opsJar, "POST", "/ui/resume", url.Values{"confirm": {"yes"}}))
}

// dashboardLogin logs in with token and returns the session cookie, or nil
// if the login was refused.
func dashboardLogin(t *testing.T, base, token string) *http.Cookie {
	t.Helper()
	req, err := http.NewRequest("POST", base+"/ui/login", strings.NewReader(url.Values{"token": {token}}.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	for _, ck := range resp.Cookies() {
		if ck.Name == auth.CookieName && ck.Value != "" {
			return ck
		}
	}
	return nil
}

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// dashboardDo sends a same-origin request with the session cookie and
// returns its status (a redirect after an action counts as 200).
func dashboardDo(t *testing.T, base string, ck *http.Cookie, method, path string, form url.Values) int {
	t.Helper()
	var body *strings.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	} else {
		body = strings.NewReader("")
	}
	req, err := http.NewRequest(method, base+path, body)
	require.NoError(t, err)
	req.AddCookie(ck)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := noRedirect.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	if resp.StatusCode == http.StatusSeeOther {
		return http.StatusOK
	}
	return resp.StatusCode
}
