package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckSchema: the checker refuses what it should, so TestOpenAPI's
// passes mean something.
func TestCheckSchema(t *testing.T) {
	doc := map[string]any{"components": map[string]any{"schemas": map[string]any{
		"T": map[string]any{"type": "object", "required": []any{"a"}, "additionalProperties": false, "properties": map[string]any{
			"a": map[string]any{"type": "string", "enum": []any{"x", "y"}},
			"n": map[string]any{"type": []any{"integer", "null"}},
			"l": map[string]any{"type": "array", "items": map[string]any{"type": "boolean"}},
		}}}}}
	ref := map[string]any{"$ref": "#/components/schemas/T"}
	for body, ok := range map[string]bool{
		`{"a":"x"}`: true, `{"a":"y","n":null,"l":[true]}`: true, `{"a":"x","n":3}`: true,
		`{}`: false, `{"a":"z"}`: false, `{"a":"x","b":1}`: false, `{"a":"x","n":1.5}`: false,
		`{"a":"x","n":"1"}`: false, `{"a":"x","l":[1]}`: false, `[]`: false, `{"a":1}`: false,
	} {
		var v any
		require.NoError(t, json.Unmarshal([]byte(body), &v))
		err := checkSchema(doc, ref, v, "$")
		assert.Equal(t, ok, err == nil, "%s: %v", body, err)
	}
	assert.Error(t, checkSchema(doc, map[string]any{"$ref": "#/components/schemas/Nope"}, 1.0, "$"))
}

// exchange is one answer of the server, as recorded.
type exchange struct {
	method, path string // path escaped
	status       int
	body         []byte
}

type recorder struct {
	mu  sync.Mutex
	all []exchange
}

func (rec *recorder) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rr := httptest.NewRecorder()
		h.ServeHTTP(rr, r)
		rec.mu.Lock()
		rec.all = append(rec.all, exchange{r.Method, r.URL.EscapedPath(), rr.Code, rr.Body.Bytes()})
		rec.mu.Unlock()
		for k, v := range rr.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rr.Code)
		w.Write(rr.Body.Bytes())
	})
}

// TestOpenAPI holds the server to openapi.json: the documented operations
// are exactly the routes, and every answer of a session touching every
// operation (successes and errors) has a documented status and validates
// against its documented schema.
func TestOpenAPI(t *testing.T) {
	raw, err := os.ReadFile("../../openapi.json")
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, json.Unmarshal(raw, &doc))
	assert.Equal(t, "3.1.0", doc["openapi"])
	paths := doc["paths"].(map[string]any)

	var documented, served []string
	for p, item := range paths {
		for m, op := range item.(map[string]any) {
			if m == "parameters" {
				continue
			}
			documented = append(documented, strings.ToUpper(m)+" "+p+" "+op.(map[string]any)["operationId"].(string))
		}
	}
	for _, rt := range (&handler{}).routes() {
		served = append(served, rt.method+" "+rt.pattern+" "+rt.op)
	}
	slices.Sort(documented)
	slices.Sort(served)
	require.Equal(t, served, documented, "openapi.json documents exactly the routes")

	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{Retention: time.Hour})
		rec := &recorder{}
		f.api.Close()
		f.api = httptest.NewServer(rec.wrap(f.h))
		tokens := make(chan string, 4) // of the callbacks to /async
		cb := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/gone":
				w.WriteHeader(http.StatusGone)
			case "/async":
				tokens <- r.Header.Get(durable.HeaderCompletionToken)
				w.WriteHeader(http.StatusAccepted)
			}
		}))
		defer cb.Close()
		f.worker()

		f.do("POST", "/v1/tasks", createBody("a", "1h", "https://example.com/"))
		f.do("POST", "/v1/tasks", createBody("a", "1h", "https://example.com/"))
		f.do("POST", "/v1/tasks", createBody("gone", "0s", cb.URL+"/gone"))
		f.do("POST", "/v1/tasks", createBody("ok", "0s", cb.URL+"/ok"))
		eventually(t, redistest.WaitBound, "a dead and a done task", func() bool {
			r := f.do("GET", "/v1/stats", "")
			tot := r.body["total"].(map[string]any)
			return tot["dead"] == 1.0 && tot["retained"] == 1.0
		})
		f.do("POST", "/v1/tasks", createBody("async1", "0s", cb.URL+"/async"))
		tok1 := receive(t, tokens, "the callback of async1")
		f.do("POST", "/v1/tasks/async1/complete", jsonBody(map[string]string{"token": tok1}))
		f.do("POST", "/v1/tasks/async1/complete", jsonBody(map[string]string{"token": tok1}))
		f.do("POST", "/v1/tasks/async1/complete", `{}`)
		f.do("POST", "/v1/tasks/async1/complete", `{"token":"x"}`, "text/plain")
		f.do("POST", "/v1/tasks", createBody("async2", "0s", cb.URL+"/async"))
		tok2 := receive(t, tokens, "the callback of async2")
		f.do("POST", "/v1/tasks/async2/fail", `{"token":"nonsense"}`)
		f.do("POST", "/v1/tasks/async2/fail", jsonBody(map[string]any{"token": tok2, "error": "no stock", "permanent": true}))
		f.do("POST", "/v1/tasks/async2/fail", jsonBody(map[string]any{"token": tok2}))
		f.do("POST", "/v1/tasks", `{"key":1}`)
		f.do("POST", "/v1/tasks", `{}`, "text/plain")
		f.do("POST", "/v1/tasks", `{"key":"`+strings.Repeat("x", 5000)+`"}`)
		f.do("GET", "/v1/tasks/a", "")
		f.doWith(http.Header{"Traceparent": {traceparent}}, "POST", "/v1/tasks", createBody("traced", "1h", "https://example.com/"))
		f.do("GET", "/v1/tasks/traced", "")
		f.doWith(http.Header{"Traceparent": {"00-bad"}}, "POST", "/v1/tasks", createBody("traced2", "1h", "https://example.com/"))
		f.do("POST", "/v1/tasks", streamBody("streamed", "1h", "orders", map[string]string{"order": "1"}))
		f.do("GET", "/v1/tasks/streamed", "")
		f.do("POST", "/v1/tasks", streamBody("streamed2", "1h", "orders", nil))
		f.do("GET", "/v1/tasks/ok", "")
		f.do("GET", "/v1/tasks/gone", "")
		f.do("GET", "/v1/tasks/none", "")
		f.do("GET", "/v1/tasks/a%01", "")
		f.do("POST", "/v1/tasks/a/reschedule", `{"delay":"2h"}`)
		f.do("POST", "/v1/tasks/gone/reschedule", `{"delay":"2h"}`)
		f.do("POST", "/v1/tasks/none/reschedule", `{"delay":"2h"}`)
		f.do("POST", "/v1/tasks/a/reschedule", `{}`)
		for _, s := range []string{"scheduled", "retrying", "in_flight", "dead", "done", "cancelled"} {
			f.do("GET", "/v1/tasks?limit=1&state="+s, "")
		}
		f.do("GET", "/v1/tasks?state=nope", "")
		f.do("GET", "/v1/tasks?state=dead&error=gone&kind=oneoff&limit=5", "")
		f.do("GET", "/v1/tasks?state=scheduled&prefix=a", "")
		f.do("GET", "/v1/tasks?state=scheduled&kind=sometimes", "")
		f.do("GET", "/v1/dead", "")
		f.do("GET", "/v1/dead?limit=0", "")
		f.do("POST", "/v1/dead/gone/requeue", "")
		f.do("POST", "/v1/dead/none/requeue", "")
		f.do("POST", "/v1/dead/a%01/requeue", "")
		f.do("DELETE", "/v1/tasks/a", "")
		f.do("DELETE", "/v1/tasks/a", "")
		f.do("DELETE", "/v1/tasks/a%01", "")
		sched := `{"name":"s","every":"1h","max_attempts":2,"callback":{"url":"https://example.com/","method":"POST"}}`
		f.do("POST", "/v1/schedules", sched)
		f.do("POST", "/v1/schedules", sched)
		f.do("POST", "/v1/schedules", `{"name":"c","cron":"0 3 * * *","callback":{"url":"https://example.com/","method":"POST"}}`)
		f.do("POST", "/v1/schedules", `{"name":"s"}`)
		f.do("POST", "/v1/schedules", sched, "text/plain")
		f.do("GET", "/v1/schedules", "")
		f.do("GET", "/v1/schedules?x=1", "")
		f.do("GET", "/v1/schedules/s", "")
		f.do("GET", "/v1/schedules/none", "")
		f.do("GET", "/v1/schedules/a%20b", "")
		f.do("DELETE", "/v1/schedules/s", "")
		f.do("DELETE", "/v1/schedules/s", "")
		f.do("DELETE", "/v1/schedules/a%20b", "")
		f.do("GET", "/v1/stats", "")
		f.do("GET", "/v1/stats?x=1", "")
		f.do("GET", "/v1/limits", "")
		f.do("GET", "/v1/limits?x=1", "")
		f.do("PUT", "/v1/limits/https%3A%2F%2Fexample.com", `{"concurrency":2,"rate":1.5}`)
		f.do("PUT", "/v1/limits/ftp%3A%2F%2Fexample.com", `{}`)
		f.do("PUT", "/v1/limits/https%3A%2F%2Fexample.com", `{"concurrency":-1}`)
		f.do("PUT", "/v1/limits/https%3A%2F%2Fexample.com", `{}`, "text/plain")
		f.do("GET", "/v1/limits", "")
		f.do("DELETE", "/v1/limits/https%3A%2F%2Fexample.com%3A443", "")
		f.do("DELETE", "/v1/limits/https%3A%2F%2Fexample.com", "")
		f.do("DELETE", "/v1/limits/x", "")
		f.do("POST", "/v1/pause", "")
		f.do("POST", "/v1/pause", `{"x":1}`)
		f.do("GET", "/v1/stats", "")
		f.do("POST", "/v1/resume", `{}`)
		f.do("PATCH", "/v1/tasks/a", "")
		f.do("GET", "/v1/elsewhere", "")

		ok := map[string]bool{} // operationId → a 2xx validated
		for _, ex := range rec.all {
			what := fmt.Sprintf("%s %s → %d %s", ex.method, ex.path, ex.status, ex.body)
			var v any
			require.NoError(t, json.Unmarshal(ex.body, &v), what)
			op := operation(paths, ex.method, ex.path)
			if op == nil { // 404 of a path, 405 of a method: the error body
				assert.Contains(t, []int{404, 405}, ex.status, what)
				assert.NoError(t, checkSchema(doc, map[string]any{"$ref": "#/components/schemas/Error"}, v, "$"), what)
				continue
			}
			schema, _ := dig(op, "responses", strconv.Itoa(ex.status), "content", "application/json", "schema").(map[string]any)
			if !assert.NotNil(t, schema, "undocumented status: %s", what) {
				continue
			}
			assert.NoError(t, checkSchema(doc, schema, v, "$"), what)
			if ex.status < 300 {
				ok[op["operationId"].(string)] = true
			}
		}
		for _, rt := range (&handler{}).routes() {
			assert.True(t, ok[rt.op], "no success of %s was checked", rt.op)
		}
	})
}

// operation finds the operation of openapi.json serving method on the
// escaped path, or nil.
func operation(paths map[string]any, method, path string) map[string]any {
	segs := strings.Split(path, "/")
	for tmpl, item := range paths {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		match := true
		for i := range ts {
			if !(strings.HasPrefix(ts[i], "{") && segs[i] != "") && ts[i] != segs[i] {
				match = false
				break
			}
		}
		if match {
			op, _ := item.(map[string]any)[strings.ToLower(method)].(map[string]any)
			return op
		}
	}
	return nil
}
