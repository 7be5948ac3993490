package e2e

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"testing"
	"time"
)

// shards is -shards for every process of a test, and the test's own Queue.
const shards = 4

// tasks creates and cancels tasks through a timerd's API (README.md,
// "API"), the way a client does.
type tasks struct {
	t    *testing.T
	base string // http://addr of a timerd
}

func (ts *tasks) create(key string, due time.Time, callback string) {
	ts.t.Helper()
	body, _ := json.Marshal(map[string]any{
		"key": key, "due_at": due.UTC().Format(time.RFC3339Nano),
		"callback": map[string]any{"url": callback, "method": "POST", "body": "{}"},
	})
	resp := ts.do("POST", "/v1/tasks", body)
	if resp.StatusCode != http.StatusCreated {
		ts.t.Fatalf("POST /v1/tasks %s: %s", key, resp.Status)
	}
}

// cancel cancels key and reports whether it was pending.
func (ts *tasks) cancel(key string) bool {
	ts.t.Helper()
	resp := ts.do("DELETE", "/v1/tasks/"+url.PathEscape(key), nil)
	switch resp.StatusCode {
	case http.StatusOK:
		return true
	case http.StatusNotFound:
		return false
	}
	ts.t.Fatalf("DELETE /v1/tasks/%s: %s", key, resp.Status)
	return false
}

func (ts *tasks) do(method, path string, body []byte) *http.Response {
	ts.t.Helper()
	req, _ := http.NewRequest(method, ts.base+path, bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		ts.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}
