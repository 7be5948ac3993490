package api

import (
	"github.com/go-timingwheel/timingwheel/durable"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSchedules(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		body := func(every, cron, url string) string {
			return jsonBody(map[string]any{"name": "nightly-report", "every": every, "cron": cron, "max_attempts": 3,
				"callback": map[string]any{"url": url, "method": "POST", "headers": map[string]any{"Authorization": []string{"secret"}}}})
		}
		r := f.do("POST", "/v1/schedules", body("1h", "", "https://reports.example.com/run"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		assert.Equal(t, true, r.body["created"])
		assert.Equal(t, "1h0m0s", r.body["every"])
		assert.Equal(t, "", r.body["cron"])
		assert.EqualValues(t, 3, r.body["max_attempts"])
		assert.Equal(t, map[string]any{"url": "https://reports.example.com/run", "method": "POST"}, r.body["callback"], "no headers: they may hold secrets")
		v1 := r.body["version"]
		assert.Len(t, v1, 12)
		assert.NotContains(t, string(r.raw), "secret")

		r = f.do("POST", "/v1/schedules", body("1h", "", "https://reports.example.com/run"))
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, false, r.body["created"])
		assert.Equal(t, v1, r.body["version"], "same content, same version")

		r = f.do("POST", "/v1/schedules", body("", "CRON_TZ=Europe/Paris 0 3 * * *", "https://reports.example.com/run"))
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, "", r.body["every"])
		assert.NotEqual(t, v1, r.body["version"])
		v2 := r.body["version"]

		r = f.do("GET", "/v1/schedules/nightly-report", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, "CRON_TZ=Europe/Paris 0 3 * * *", r.body["cron"])
		assert.Equal(t, v2, r.body["version"])
		assert.NotContains(t, r.body, "created")

		r = f.do("GET", "/v1/schedules", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		require.Len(t, r.body["schedules"], 1)

		r = f.do("DELETE", "/v1/schedules/nightly-report", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, map[string]any{"deleted": true}, r.body)
		r = f.do("DELETE", "/v1/schedules/nightly-report", "")
		assert.Equal(t, http.StatusNotFound, r.status)
		r = f.do("GET", "/v1/schedules/nightly-report", "")
		assert.Equal(t, http.StatusNotFound, r.status)
		assert.Equal(t, "not_found", r.errCode())
	})
}
