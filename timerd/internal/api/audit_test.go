package api

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a bytes.Buffer for a logger that handlers write to
// concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines decodes the JSON lines written so far whose msg is msg.
func (s *syncBuffer) lines(t *testing.T, msg string) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(s.b.Bytes()), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(l, &m), "%s", l)
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// Every request to a route that changes something writes one audit line
// with the token's name and role, the operation, its subject and the
// status, refusals included; reads write none.
func TestAuditLines(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		var logs syncBuffer
		f := newFixtureWith(t, s, durable.Options{}, func(c *Config) {
			c.Log = slog.New(slog.NewJSONHandler(&logs, nil))
		})
		as := func(cr auth.Credential) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				f.h.ServeHTTP(w, r.WithContext(auth.WithCredential(r.Context(), cr)))
			})
		}
		f.api.Close()
		f.api = httptest.NewServer(as(auth.Credential{Name: "deployer", Role: auth.RoleOperator}))
		f.do("POST", "/v1/tasks", createBody("audit/1", "1h", "https://example.com/"))
		f.do("GET", "/v1/tasks/audit%2F1", "")
		f.do("POST", "/v1/tasks/audit%2F1/reschedule", `{"delay":"2h"}`)
		f.do("DELETE", "/v1/tasks/audit%2F1", "")
		f.do("POST", "/v1/dead/none/requeue", "")
		f.do("POST", "/v1/schedules", `{"name":"nightly","every":"24h","callback":{"url":"https://example.com/","method":"POST"}}`)
		f.do("POST", "/v1/pause", "")
		f.do("POST", "/v1/resume", "")
		f.do("GET", "/v1/stats", "")
		f.api.Close()
		f.api = httptest.NewServer(as(auth.Credential{Name: "viewer", Role: auth.RoleReadOnly}))
		f.do("POST", "/v1/pause", "")

		type line struct {
			token, role, action, subject string
			status                       float64
		}
		var got []line
		for _, l := range logs.lines(t, auth.AuditMessage) {
			subject, _ := l["key"].(string)
			if n, ok := l["name"].(string); ok {
				subject = n
			}
			got = append(got, line{l["token"].(string), l["role"].(string), l["action"].(string), subject, l["status"].(float64)})
		}
		assert.Equal(t, []line{
			{"deployer", "operator", "createTask", "audit/1", 201},
			{"deployer", "operator", "rescheduleTask", "audit/1", 200},
			{"deployer", "operator", "cancelTask", "audit/1", 200},
			{"deployer", "operator", "requeueDead", "none", 404},
			{"deployer", "operator", "putSchedule", "nightly", 201},
			{"deployer", "operator", "pause", "", 200},
			{"deployer", "operator", "resume", "", 200},
			{"viewer", "read-only", "pause", "", 403},
		}, got)
	})
}
