package cli

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The commands that change tasks, schedules and the queue send their
// route the body it documents, print the answer and exit 0.
func TestChangeCommands(t *testing.T) {
	sched := filepath.Join(t.TempDir(), "nightly.json")
	require.NoError(t, os.WriteFile(sched, []byte(`{"name": "nightly", "cron": "0 3 * * *",
		"callback": {"url": "https://example.com/", "method": "POST"}}`), 0o600))
	f, api := newFake(t, map[string]answer{
		"POST /v1/tasks/order%2F1/reschedule": {200, `{"key":"order/1","state":"scheduled"}`},
		"POST /v1/tasks/order%2F1/complete":   {200, `{"state":"done"}`},
		"POST /v1/tasks/order%2F1/fail":       {200, `{"state":"dead"}`},
		"GET /v1/schedules/nightly":           {200, `{"name":"nightly"}`},
		"POST /v1/schedules":                  {201, `{"name":"nightly","created":true}`},
		"DELETE /v1/schedules/nightly":        {200, `{"deleted":true}`},
		"GET /v1/stats":                       {200, `{"paused":false}`},
		"POST /v1/pause":                      {200, `{"paused":true}`},
		"POST /v1/resume":                     {200, `{"paused":false}`},
		"GET /v1/tasks?error=timeout&kind=oneoff&prefix=orders%2F&state=dead": {200, `{"tasks":[],"next_cursor":"c","scanned":10000}`},
	})
	for _, tc := range []struct {
		args          []string
		request, body string
		out           string
	}{
		{[]string{"tasks", "reschedule", "order/1", "-delay", "1h"}, "POST /v1/tasks/order%2F1/reschedule", `{"delay":"1h"}`, `"state": "scheduled"`},
		{[]string{"tasks", "reschedule", "order/1", "-at", "2026-11-25T10:00:00Z"}, "POST /v1/tasks/order%2F1/reschedule", `{"due_at":"2026-11-25T10:00:00Z"}`, `"state": "scheduled"`},
		{[]string{"tasks", "complete", "order/1", "-completion-token", "v1:1:0.7:mac"}, "POST /v1/tasks/order%2F1/complete", `{"token":"v1:1:0.7:mac"}`, `"state": "done"`},
		{[]string{"tasks", "fail", "order/1", "-completion-token", "v1:1:0.7:mac", "-error", "no stock", "-permanent"}, "POST /v1/tasks/order%2F1/fail",
			`{"error":"no stock","permanent":true,"token":"v1:1:0.7:mac"}`, `"state": "dead"`},
		{[]string{"schedules", "get", "nightly"}, "GET /v1/schedules/nightly", ``, `"name": "nightly"`},
		{[]string{"schedules", "put", "-file", sched}, "POST /v1/schedules",
			`{"name":"nightly","cron":"0 3 * * *","callback":{"url":"https://example.com/","method":"POST"}}`, `"created": true`},
		{[]string{"schedules", "delete", "nightly"}, "DELETE /v1/schedules/nightly", ``, `"deleted": true`},
		{[]string{"stats"}, "GET /v1/stats", ``, `"paused": false`},
		{[]string{"tasks", "list", "-state", "dead", "-prefix", "orders/", "-error", "timeout", "-kind", "oneoff"},
			"GET /v1/tasks?error=timeout&kind=oneoff&prefix=orders%2F&state=dead", ``, `"scanned": 10000`},
		{[]string{"pause"}, "POST /v1/pause", ``, `"paused": true`},
		{[]string{"resume", "-server", api.URL}, "POST /v1/resume", ``, `"paused": false`},
	} {
		before := len(f.requests())
		code, out, errOut := run(t, api, tc.args...)
		require.Equal(t, 0, code, "%v: %s", tc.args, errOut)
		assert.Contains(t, out, tc.out, tc.args)
		require.Equal(t, []string{tc.request + " Bearer tok"}, f.requests()[before:], tc.args)
		f.mu.Lock()
		assert.Equal(t, tc.body, f.bodies[before], tc.args)
		f.mu.Unlock()
	}
}

// Bad command lines of those commands exit 2 with the usage, and call
// nothing.
func TestChangeCommandsUsage(t *testing.T) {
	f, api := newFake(t, nil)
	for _, args := range [][]string{
		{"tasks", "reschedule", "k"},
		{"tasks", "reschedule", "k", "-delay", "1h", "-at", "2026-11-25T10:00:00Z"},
		{"tasks", "complete", "k"},
		{"tasks", "fail", "k", "-error", "x"},
		{"tasks", "complete", "k", "-completion-token", "t", "-permanent"},
		{"schedules", "put"},
		{"schedules", "put", "-file", filepath.Join(t.TempDir(), "none.json")},
		{"schedules", "get"},
		{"stats", "x"},
		{"pause", "-all"},
	} {
		code, _, errOut := run(t, api, args...)
		assert.Equal(t, 2, code, "%v", args)
		assert.Contains(t, errOut, "usage: timerd COMMAND", "%v", args)
	}
	assert.Empty(t, f.requests())
}

// dead requeue -all with a filter walks the search of the dead set by its
// continuation and requeues only what matched.
func TestRequeueAllFiltered(t *testing.T) {
	f, api := newFake(t, map[string]answer{
		"GET /v1/tasks?error=timeout&limit=1000&state=dead":           {200, `{"tasks":[{"key":"a"}],"next_cursor":"c1","scanned":10000}`},
		"GET /v1/tasks?cursor=c1&error=timeout&limit=1000&state=dead": {200, `{"tasks":[{"key":"b"}],"next_cursor":"","scanned":7}`},
		"POST /v1/dead/a/requeue":                                     {200, `{"requeued":true}`},
		"POST /v1/dead/b/requeue":                                     {200, `{"requeued":true}`},
	})
	code, out, errOut := run(t, api, "dead", "requeue", "-all", "-error", "timeout")
	require.Equal(t, 0, code, errOut)
	assert.Equal(t, "requeued 2 dead task(s); 0 were gone meanwhile\n", out)
	assert.Len(t, f.requests(), 4)
	code, _, _ = run(t, api, "dead", "requeue", "k", "-error", "timeout")
	assert.Equal(t, 2, code, "a filter without -all")
}

// Every flag a command takes is described in its help.
func TestEveryFlagDocumented(t *testing.T) {
	for _, c := range apiCommands {
		for _, f := range append(append([]string(nil), c.flags...), commonFlags...) {
			d, ok := flagDocs[f]
			assert.True(t, ok && d[0] != "" && d[1] != "", "%s: -%s has no description", c.name, f)
		}
	}
}
