package api

import (
	"github.com/go-timingwheel/timingwheel/durable"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestLimits: PUT gives an origin, however spelled, a limit of its own that
// GET shows under its scheme://host:port; DELETE gives it the default back.
func TestLimits(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		r := f.do("PUT", "/v1/limits/HTTPS%3A%2F%2FHooks.example.com%2Fpath", `{"concurrency":2,"rate":0.5,"burst":3}`)
		assert.Equal(t, 200, r.status, "%s", r.raw)
		want := map[string]any{"origin": "https://hooks.example.com:443", "concurrency": 2.0, "rate": 0.5, "burst": 3.0}
		assert.Equal(t, want, r.body)

		r = f.do("GET", "/v1/limits", "")
		assert.Equal(t, []any{want}, r.body["origins"])
		assert.Equal(t, map[string]any{"origin": "", "concurrency": 0.0, "rate": 0.0, "burst": 0.0}, r.body["default"])

		r = f.do("PUT", "/v1/limits/https%3A%2F%2Fhooks.example.com", `{"concurrency":1}`)
		assert.Equal(t, 1.0, r.body["concurrency"])
		assert.Equal(t, 0.0, r.body["rate"], "a field left out is no limit")

		for path, body := range map[string]string{
			"/v1/limits/hooks.example.com":               `{}`,
			"/v1/limits/https%3A%2F%2Fhooks.example.com": `{"concurrency":-1}`,
			"/v1/limits/https%3A%2F%2F":                  `{}`,
		} {
			r = f.do("PUT", path, body)
			assert.Equal(t, 400, r.status, "%s %s: %s", path, body, r.raw)
		}
		r = f.do("PUT", "/v1/limits/https%3A%2F%2Fhooks.example.com", `{"rate":1e10}`)
		assert.Equal(t, map[string]any{"code": "invalid_argument", "field": "rate", "message": "rate must be 0 (no limit) to 1e9 per second"}, r.body["error"])
		r = f.do("PUT", "/v1/limits/https%3A%2F%2Fhooks.example.com", `{"speed":1}`)
		assert.Equal(t, 400, r.status)

		r = f.do("DELETE", "/v1/limits/https%3A%2F%2Fhooks.example.com%3A443", "")
		assert.Equal(t, 200, r.status, "%s", r.raw)
		assert.Equal(t, []any{}, f.do("GET", "/v1/limits", "").body["origins"])
		assert.Equal(t, 404, f.do("DELETE", "/v1/limits/https%3A%2F%2Fhooks.example.com", "").status)
	})
}
