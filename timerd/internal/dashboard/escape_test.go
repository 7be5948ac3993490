package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// Task keys and errors are user data: wherever a page shows them, as text,
// in an attribute or in a link, they are escaped, never markup.
func TestHostileKeysAndErrorsAreEscaped(t *testing.T) {
	q := newQueue(t, standalone(t))
	fixture(t, q, []string{hostileKey}, nil, 0, 0)
	h := newDashboard(t, q)
	key := url.Values{"key": {hostileKey}}.Encode()
	// A second one for the outcome and the 404, never added.
	other := url.Values{"key": {`"><img src=x onerror=alert(2)>`}}.Encode()

	pages := []string{
		"/ui/dead",
		"/ui/tasks?state=dead",
		"/ui/task?" + key,
		"/ui/dead?done=requeued&" + key,
		"/ui/task?done=cancelled&" + other,
		"/ui/task?" + other,
		"/ui/tasks?" + url.Values{"state": {hostileKey}}.Encode(),
		"/ui/" + url.PathEscape(hostileKey),
	}
	for _, path := range pages {
		r := get(t, h, path, true)
		for _, raw := range []string{hostileKey, "<b>gone</b>", "<img"} {
			if strings.Contains(r.body, raw) {
				t.Errorf("GET %s (%d) shows %q unescaped:\n%s", path, r.status, raw, r.body)
			}
		}
		if !strings.Contains(r.body, "&lt;script&gt;alert(1)&lt;/script&gt;") && !strings.Contains(r.body, "&lt;img src=x") {
			t.Errorf("GET %s (%d) does not show the key escaped:\n%s", path, r.status, r.body)
		}
	}

	// Its forms name it escaped for the attribute, so that a browser posts
	// the key itself back (the browser test clicks such a button).
	if !strings.Contains(get(t, h, "/ui/dead", true).body,
		`<input type="hidden" name="key" value="&lt;script&gt;alert(1)&lt;/script&gt;">`) {
		t.Errorf("hidden key field not escaped for its attribute")
	}
	r := post(t, h, "/ui/requeue", url.Values{"key": {hostileKey}, "from": {"dead"}}, true, nil)
	if r.status != http.StatusSeeOther {
		t.Fatalf("requeue of the hostile key: %d", r.status)
	}
	if info, err := q.Get(context.Background(), hostileKey); err != nil || info.State == "dead" {
		t.Fatalf("hostile key after Requeue: %+v, %v", info, err)
	}
	dead := get(t, h, "/ui/dead", true).body
	if strings.Contains(dead, "alert(1)") {
		t.Errorf("hostile key still in the dead set page")
	}
}
