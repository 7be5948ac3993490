package server

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// Through the whole server, a change by a named token writes one audit
// line naming it (auth.Wrap's credential reaches the API's audit), and a
// read writes none.
func TestAuditNamesTheToken(t *testing.T) {
	cfg := sqliteConfig(t)
	cfg.Token = ""
	cfg.Tokens = []auth.Credential{
		{Name: "root", Role: auth.RoleAdmin, Token: "admin-token-0123456789"},
		{Name: "deploy-bot", Role: auth.RoleOperator, Token: "operator-token-0123456789"},
	}
	var logs lockedBuffer
	s, err := New(cfg, slog.New(slog.NewJSONHandler(&logs, nil)))
	require.NoError(t, err)
	defer s.Close()
	h := s.Handler()
	for _, path := range []string{"/v1/pause", "/v1/resume"} {
		r := httptest.NewRequest("POST", path, nil)
		r.Header.Set("Authorization", "Bearer operator-token-0123456789")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	}
	require.Equal(t, http.StatusOK, get(t, h, "/v1/stats", "operator-token-0123456789").Code)

	var audits []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		if m["msg"] == auth.AuditMessage {
			audits = append(audits, m)
		}
	}
	require.Len(t, audits, 2, logs.String())
	for i, action := range []string{"pause", "resume"} {
		assert.Equal(t, "deploy-bot", audits[i]["token"])
		assert.Equal(t, "operator", audits[i]["role"])
		assert.Equal(t, action, audits[i]["action"])
		assert.Equal(t, 200.0, audits[i]["status"])
	}
}
