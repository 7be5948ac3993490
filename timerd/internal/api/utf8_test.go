package api

import (
	"github.com/go-timingwheel/timingwheel/durable"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestKeysAreNotRewritten: encoding/json turns bytes that are not UTF-8, and
// \u escapes of lone surrogates, into U+FFFD. A key so rewritten would be
// another client's key: "u8\xff" and "u8\xfe" would both be "u8\uFFFD", and
// the second client would get 200 created:false with the first one's task.
// Both are refused, and a key that holds U+FFFD itself is stored as given.
func TestKeysAreNotRewritten(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		for _, key := range []string{"u8\xff", "u8\xfe", `u8\ud800`, `u8\udfff`, `u8\ud800\u0041`} {
			body := `{"key":"` + key + `","delay":"1h","callback":{"url":"https://e.com/","method":"POST"}}`
			r := f.do("POST", "/v1/tasks", body)
			assert.Equal(t, http.StatusBadRequest, r.status, "%q: %s", key, r.raw)
			assert.Equal(t, "invalid_argument", r.errCode(), "%q: %s", key, r.raw)
			assert.Equal(t, "key", r.errField(), "%q: %s", key, r.raw)
		}
		f.nothingStored()

		// U+FFFD itself, and a surrogate pair, are characters like any other.
		for _, key := range []string{"u8\uFFFD", `u8\ud83d\ude00`} {
			r := f.do("POST", "/v1/tasks", `{"key":"`+key+`","delay":"1h","callback":{"url":"https://e.com/","method":"POST"}}`)
			require.Equal(t, http.StatusCreated, r.status, "%q: %s", key, r.raw)
		}
		r := f.do("GET", "/v1/tasks/u8%EF%BF%BD", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, "u8\uFFFD", r.body["key"])
		r = f.do("GET", "/v1/tasks/u8%F0%9F%98%80", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, "u8😀", r.body["key"])
	})
}

// TestBodiesMustBeUTF8: every request body is refused, 400 naming the field
// when a string in it is not UTF-8, before decoding could rewrite it; in a
// path or query the same bytes are refused or matched as they are.
func TestBodiesMustBeUTF8(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		r := f.do("POST", "/v1/tasks", createBody("k", "1h", "https://e.com/"))
		require.Equal(t, http.StatusCreated, r.status, "%s", r.raw)
		cb := `"callback":{"url":"https://e.com/","method":"POST"}`
		// The bodies write the byte 0xff, never UTF-8, as \xff (and 0xe9 as
		// \xe9); the loop puts the byte itself in its place.
		bytesIn := strings.NewReplacer(`\xff`, "\xff", `\xe9`, "\xe9")
		for _, tc := range []struct {
			name, method, path, body, field string
		}{
			{"callback body", "POST", "/v1/tasks", `{"key":"k2","delay":"1h","callback":{"url":"https://e.com/","method":"POST","body":"caf\xe9"}}`, "callback.body"},
			{"callback body escape", "POST", "/v1/tasks", `{"key":"k2","delay":"1h","callback":{"url":"https://e.com/","method":"POST","body":"\udc00x"}}`, "callback.body"},
			{"header value", "POST", "/v1/tasks", `{"key":"k2","delay":"1h","callback":{"url":"https://e.com/","method":"POST","headers":{"X-A":["ok","\xff"]}}}`, "callback.headers.X-A"},
			{"header name", "POST", "/v1/tasks", `{"key":"k2","delay":"1h","callback":{"url":"https://e.com/","method":"POST","headers":{"X-\xff":["1"]}}}`, "callback.headers"},
			{"top-level field name", "POST", "/v1/tasks", `{"k\xffey":"k2","delay":"1h",` + cb + `}`, ""},
			{"delay", "POST", "/v1/tasks", `{"key":"k2","delay":"1h\xff",` + cb + `}`, "delay"},
			{"reschedule due_at", "POST", "/v1/tasks/k/reschedule", `{"due_at":"2030-01-01T00:00:00Z\xff"}`, "due_at"},
			{"requeue's empty object", "POST", "/v1/dead/k/requeue", `{"\xff":1}`, ""},
			{"schedule name", "POST", "/v1/schedules", `{"name":"s\xff","every":"1h",` + cb + `}`, "name"},
			{"schedule callback url", "POST", "/v1/schedules", `{"name":"s","every":"1h","callback":{"url":"https://e.com/\xff","method":"POST"}}`, "callback.url"},
		} {
			r := f.do(tc.method, tc.path, bytesIn.Replace(tc.body))
			assert.Equal(t, http.StatusBadRequest, r.status, "%s: %s", tc.name, r.raw)
			assert.Equal(t, "invalid_argument", r.errCode(), "%s: %s", tc.name, r.raw)
			assert.Equal(t, tc.field, r.errField(), "%s: %s", tc.name, r.raw)
			assert.Contains(t, r.errPart("message"), "UTF-8", "%s: %s", tc.name, r.raw)
		}
		for _, tc := range []struct{ name, method, path, field string }{
			{"path key", "GET", "/v1/tasks/k%FF", "key"},
			{"path key to cancel", "DELETE", "/v1/tasks/k%FF", "key"},
			{"path key to requeue", "POST", "/v1/dead/k%FF/requeue", "key"},
			{"path name", "DELETE", "/v1/schedules/s%FF", "name"},
			{"cursor", "GET", "/v1/tasks?state=dead&cursor=%FF", "cursor"},
			{"state", "GET", "/v1/tasks?state=dead%FF", "state"},
		} {
			r := f.do(tc.method, tc.path, "")
			assert.Equal(t, http.StatusBadRequest, r.status, "%s: %s", tc.name, r.raw)
			assert.Equal(t, tc.field, r.errField(), "%s: %s", tc.name, r.raw)
		}
		r = f.do("GET", "/v1/tasks/k", "")
		require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
		assert.Equal(t, "scheduled", r.body["state"], "the reschedule refused left it alone")
		r = f.do("GET", "/v1/schedules", "")
		assert.Equal(t, []any{}, r.body["schedules"], "no schedule stored")
		st, err := f.q.Stats(t.Context())
		require.NoError(t, err)
		assert.EqualValues(t, 1, st.Total.Scheduled, "only k stored: %+v", st.Total)
	})
}
