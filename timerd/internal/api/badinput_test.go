package api

import (
	"github.com/go-timingwheel/timingwheel/durable"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestBadInput: every bad request gets its status, code and field, and
// stores nothing.
func TestBadInput(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{}) // MaxBody 4096
		cb := `"callback":{"url":"https://example.com/h","method":"POST"}`
		with := func(fields string) string { return "{" + fields + "}" }
		for _, tc := range []struct {
			name, method, path, body, ctype string
			status                          int
			code, field                     string
		}{
			{"unknown field", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","color":"red",` + cb), "", 400, "invalid_argument", "color"},
			{"unknown nested field", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GET","verb":"x"}`), "", 400, "invalid_argument", "callback.verb"},
			{"member twice", "POST", "/v1/tasks", with(`"key":"a","key":"b","delay":"1s",` + cb), "", 400, "invalid_argument", "key"},
			{"nested member twice", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GET","method":"POST"}`), "", 400, "invalid_argument", "callback.method"},
			{"header twice", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GET","headers":{"X-A":["1"],"X-A":["2"]}}`), "", 400, "invalid_argument", "callback.headers.X-A"},
			{"field in other case", "POST", "/v1/tasks", with(`"KEY":"k","delay":"1s",` + cb), "", 400, "invalid_argument", "KEY"},
			{"not json", "POST", "/v1/tasks", `{"key":`, "", 400, "invalid_argument", ""},
			{"two values", "POST", "/v1/tasks", with(`"key":"k","delay":"1s",`+cb) + `{}`, "", 400, "invalid_argument", ""},
			{"array", "POST", "/v1/tasks", `[]`, "", 400, "invalid_argument", ""},
			{"wrong type", "POST", "/v1/tasks", with(`"key":7,"delay":"1s",` + cb), "", 400, "invalid_argument", "key"},
			{"wrong nested type", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GET","headers":{"A":"b"}}`), "", 400, "invalid_argument", "callback.headers"},
			{"fractional attempts", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","max_attempts":1.5,` + cb), "", 400, "invalid_argument", "max_attempts"},
			{"zero attempts", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","max_attempts":0,` + cb), "", 400, "invalid_argument", "max_attempts"},
			{"no key", "POST", "/v1/tasks", with(`"delay":"1s",` + cb), "", 400, "invalid_argument", "key"},
			{"long key", "POST", "/v1/tasks", with(`"key":"` + strings.Repeat("k", 513) + `","delay":"1s",` + cb), "", 400, "invalid_argument", "key"},
			{"control in key", "POST", "/v1/tasks", with(`"key":"a\u0007b","delay":"1s",` + cb), "", 400, "invalid_argument", "key"},
			{"C1 control in key", "POST", "/v1/tasks", with(`"key":"a\u0085b","delay":"1s",` + cb), "", 400, "invalid_argument", "key"},
			{"space-ended key", "POST", "/v1/tasks", with(`"key":"k ","delay":"1s",` + cb), "", 400, "invalid_argument", "key"},
			{"schedule's key", "POST", "/v1/tasks", with(`"key":"periodic:x@1","delay":"1s",` + cb), "", 400, "invalid_argument", "key"},
			{"both times", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","due_at":"2030-01-01T00:00:00Z",` + cb), "", 400, "invalid_argument", "due_at"},
			{"neither time", "POST", "/v1/tasks", with(`"key":"k",` + cb), "", 400, "invalid_argument", "due_at"},
			{"bad time", "POST", "/v1/tasks", with(`"key":"k","due_at":"tomorrow",` + cb), "", 400, "invalid_argument", "due_at"},
			{"time without zone", "POST", "/v1/tasks", with(`"key":"k","due_at":"2030-01-01T00:00:00",` + cb), "", 400, "invalid_argument", "due_at"},
			{"time before 1970", "POST", "/v1/tasks", with(`"key":"k","due_at":"1969-12-31T23:59:59Z",` + cb), "", 400, "invalid_argument", "due_at"},
			// 1970 on its own clock, 1969-12-31T10:00:00Z as an instant.
			{"time before 1970 in its offset", "POST", "/v1/tasks", with(`"key":"k","due_at":"1970-01-01T00:00:00+14:00",` + cb), "", 400, "invalid_argument", "due_at"},
			{"the epoch", "POST", "/v1/tasks", with(`"key":"k","due_at":"1970-01-01T00:00:00Z",` + cb), "", 400, "invalid_argument", "due_at"},
			{"reschedule before 1970 in its offset", "POST", "/v1/tasks/k/reschedule", `{"due_at":"1970-01-01T13:59:59.999+14:00"}`, "", 400, "invalid_argument", "due_at"},
			{"bad delay", "POST", "/v1/tasks", with(`"key":"k","delay":"soon",` + cb), "", 400, "invalid_argument", "delay"},
			{"negative delay", "POST", "/v1/tasks", with(`"key":"k","delay":"-1s",` + cb), "", 400, "invalid_argument", "delay"},
			{"no callback", "POST", "/v1/tasks", with(`"key":"k","delay":"1s"`), "", 400, "invalid_argument", "callback"},
			{"no url", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"method":"GET"}`), "", 400, "invalid_argument", "callback.url"},
			{"bad scheme", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"ftp://e.com/","method":"GET"}`), "", 400, "invalid_argument", "callback.url"},
			{"relative url", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"/hook","method":"GET"}`), "", 400, "invalid_argument", "callback.url"},
			{"bad port", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"http://e.com:99999/","method":"GET"}`), "", 400, "invalid_argument", "callback.url"},
			{"no method", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/"}`), "", 400, "invalid_argument", "callback.method"},
			{"bad method", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GE T"}`), "", 400, "invalid_argument", "callback.method"},
			{"lower-case method", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"post"}`), "", 400, "invalid_argument", "callback.method"},
			{"mixed-case method", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"Post"}`), "", 400, "invalid_argument", "callback.method"},
			{"schedule lower-case method", "POST", "/v1/schedules", `{"name":"s","every":"1h","callback":{"url":"https://e.com/","method":"get"}}`, "", 400, "invalid_argument", "callback.method"},
			{"bad header value", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GET","headers":{"X-Ok":["1"],"X-Bad":["a\nb"]}}`), "", 400, "invalid_argument", "callback.headers.X-Bad"},
			{"bad header name", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GET","headers":{"X Bad":["1"]}}`), "", 400, "invalid_argument", "callback.headers.X Bad"},
			{"host header", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GET","headers":{"Host":["x"]}}`), "", 400, "invalid_argument", "callback.headers.Host"},
			{"both bodies", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GET","body":"a","body_base64":"YQ=="}`), "", 400, "invalid_argument", "callback.body_base64"},
			{"bad base64", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GET","body_base64":"%%"}`), "", 400, "invalid_argument", "callback.body_base64"},
			{"bad timeout", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GET","timeout":"-1s"}`), "", 400, "invalid_argument", "callback.timeout"},
			{"too large", "POST", "/v1/tasks", with(`"key":"k","delay":"1s","callback":{"url":"https://e.com/","method":"GET","body":"` + strings.Repeat("x", 5000) + `"}`), "", 413, "too_large", ""},
			{"no content type", "POST", "/v1/tasks", with(`"key":"k","delay":"1s",` + cb), "-", 415, "unsupported_media_type", ""},
			{"text content type", "POST", "/v1/tasks", with(`"key":"k","delay":"1s",` + cb), "text/plain", 415, "unsupported_media_type", ""},
			{"charset is fine but field bad", "POST", "/v1/tasks", with(`"key":"","delay":"1s",` + cb), "application/json; charset=utf-8", 400, "invalid_argument", "key"},
			{"bad path key", "GET", "/v1/tasks/a%01b", "", "", 400, "invalid_argument", "key"},
			{"long path key", "GET", "/v1/tasks/" + strings.Repeat("k", 513), "", "", 400, "invalid_argument", "key"},
			{"reschedule unknown field", "POST", "/v1/tasks/k/reschedule", `{"at":"x"}`, "", 400, "invalid_argument", "at"},
			{"reschedule neither", "POST", "/v1/tasks/k/reschedule", `{}`, "", 400, "invalid_argument", "due_at"},
			{"reschedule negative", "POST", "/v1/tasks/k/reschedule", `{"delay":"-5m"}`, "", 400, "invalid_argument", "delay"},
			{"list without state", "GET", "/v1/tasks", "", "", 400, "invalid_argument", "state"},
			{"list bad state", "GET", "/v1/tasks?state=in+flight", "", "", 400, "invalid_argument", "state"},
			{"list bad limit", "GET", "/v1/tasks?state=dead&limit=0", "", "", 400, "invalid_argument", "limit"},
			{"list big limit", "GET", "/v1/tasks?state=dead&limit=1001", "", "", 400, "invalid_argument", "limit"},
			{"list bad cursor", "GET", "/v1/tasks?state=dead&cursor=xyz", "", "", 400, "invalid_argument", "cursor"},
			{"list unknown param", "GET", "/v1/tasks?state=dead&page=2", "", "", 400, "invalid_argument", "page"},
			{"list repeated param", "GET", "/v1/tasks?state=dead&state=done", "", "", 400, "invalid_argument", "state"},
			{"dead with state", "GET", "/v1/dead?state=done", "", "", 400, "invalid_argument", "state"},
			{"bad method", "PUT", "/v1/tasks/k", `{}`, "", 405, "method_not_allowed", ""},
			{"bad method on collection", "DELETE", "/v1/tasks", "", "", 405, "method_not_allowed", ""},
			{"unknown path", "GET", "/v1/nothing", "", "", 404, "not_found", ""},
			{"schedule bad name", "POST", "/v1/schedules", `{"name":"a/b","every":"1h",` + cb + `}`, "", 400, "invalid_argument", "name"},
			{"schedule neither", "POST", "/v1/schedules", `{"name":"s",` + cb + `}`, "", 400, "invalid_argument", "every"},
			{"schedule both", "POST", "/v1/schedules", `{"name":"s","every":"1h","cron":"* * * * *",` + cb + `}`, "", 400, "invalid_argument", "every"},
			{"schedule short every", "POST", "/v1/schedules", `{"name":"s","every":"500ms",` + cb + `}`, "", 400, "invalid_argument", "every"},
			{"schedule bad every", "POST", "/v1/schedules", `{"name":"s","every":"hourly",` + cb + `}`, "", 400, "invalid_argument", "every"},
			{"schedule bad cron", "POST", "/v1/schedules", `{"name":"s","cron":"* * *",` + cb + `}`, "", 400, "invalid_argument", "cron"},
			{"schedule bad url", "POST", "/v1/schedules", `{"name":"s","every":"1h","callback":{"url":"mailto:x","method":"GET"}}`, "", 400, "invalid_argument", "callback.url"},
			{"schedule unknown field", "POST", "/v1/schedules", `{"name":"s","every":"1h","start":"now",` + cb + `}`, "", 400, "invalid_argument", "start"},
			{"schedule path name", "GET", "/v1/schedules/a%20b", "", "", 400, "invalid_argument", "name"},
			{"stats param", "GET", "/v1/stats?x=1", "", "", 400, "invalid_argument", "x"},
		} {
			var r reply
			switch tc.ctype {
			case "":
				r = f.do(tc.method, tc.path, tc.body)
			case "-":
				r = f.do(tc.method, tc.path, tc.body, "")
			default:
				r = f.do(tc.method, tc.path, tc.body, tc.ctype)
			}
			assert.Equal(t, tc.status, r.status, "%s: %s", tc.name, r.raw)
			assert.Equal(t, tc.code, r.errCode(), "%s: %s", tc.name, r.raw)
			assert.Equal(t, tc.field, r.errField(), "%s: %s", tc.name, r.raw)
			// A client reads the message, not the library's package names.
			assert.NotRegexp(t, `(durable|rediswheel): `, r.errPart("message"), "%s: %s", tc.name, r.raw)
			if tc.status == http.StatusMethodNotAllowed {
				assert.NotEmpty(t, r.header.Get("Allow"), tc.name)
			}
		}
		f.nothingStored()
		r := f.do("GET", "/v1/schedules", "")
		assert.Equal(t, []any{}, r.body["schedules"], "no schedule stored")
	})
}
