package server

import (
	"context"
	"database/sql"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A store that cannot answer now gives 503 unavailable on every store, by
// durable.ErrUnavailable, not by recognising one store's errors: Redis and
// PostgreSQL with nothing listening (a server stopped), SQLite with its
// write lock held by another process (its writes wait out the busy timeout,
// 5 s; its reads go on, WAL, and are not asked here).
func TestStoreOutageIs503(t *testing.T) {
	const task = `{"key":"k","delay":"1h","callback":{"url":"http://127.0.0.1:9/","method":"POST"}}`
	const schedule = `{"name":"nightly","every":"1h","callback":{"url":"http://127.0.0.1:9/","method":"POST"}}`
	reads := [][3]string{
		{"GET", "/v1/tasks/k", ""},
		{"GET", "/v1/tasks?state=dead", ""},
		{"GET", "/v1/stats", ""},
		{"GET", "/v1/schedules", ""},
	}
	writes := [][3]string{
		{"POST", "/v1/tasks", task},
		{"DELETE", "/v1/tasks/k", ""},
		{"POST", "/v1/schedules", schedule},
	}
	check := func(t *testing.T, s *Server, cfg config.Config, reqs [][3]string) {
		for _, req := range reqs {
			r := httptest.NewRequest(req[0], req[1], strings.NewReader(req[2]))
			r.Header.Set("Authorization", "Bearer "+cfg.Token)
			r.Header.Set("Content-Type", "application/json")
			w := httptest.NewRecorder()
			s.Handler().ServeHTTP(w, r)
			if assert.Equal(t, http.StatusServiceUnavailable, w.Code, "%v: %s", req, w.Body) {
				assert.Equal(t, apierror.Unavailable, errorCode(t, w), "%v", req)
			}
		}
	}
	t.Run("redis", func(t *testing.T) {
		cfg := testConfig(t, "redis://127.0.0.1:1/0")
		s := newServer(t, cfg)
		defer s.Close()
		check(t, s, cfg, append(reads, writes...))
	})
	t.Run("postgres", func(t *testing.T) {
		cfg := testConfig(t, "")
		cfg.Store, cfg.RedisURL, cfg.StoreURL = config.StorePostgres, "", "postgres://nobody:x@127.0.0.1:1/none?connect_timeout=2"
		s := newServer(t, cfg)
		defer s.Close()
		check(t, s, cfg, append(reads, writes...))
	})
	t.Run("sqlite", func(t *testing.T) {
		cfg := sqliteConfig(t)
		s := newServer(t, cfg) // creates the file
		defer s.Close()
		db, err := sql.Open("sqlite", cfg.StorePath)
		require.NoError(t, err)
		defer db.Close()
		conn, err := db.Conn(context.Background())
		require.NoError(t, err)
		defer conn.Close()
		_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE") // the write lock, held
		require.NoError(t, err)
		defer conn.ExecContext(context.Background(), "ROLLBACK") //nolint:errcheck // the test is over
		check(t, s, cfg, writes)
	})
}
