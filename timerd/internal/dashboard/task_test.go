package dashboard

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
)

// A task's page shows its state, attempts, last error and delivery log, as
// Get reads them; the search form's GET leads to it; an unknown key is a 404.
func TestTaskPage(t *testing.T) {
	q := newQueue(t, standalone(t))
	fixture(t, q, []string{"dead/1"}, []string{"done/1"}, 0, 0)
	h := newDashboard(t, q)

	r := get(t, h, "/ui/task?"+url.Values{"key": {"dead/1"}}.Encode(), true)
	if r.status != http.StatusOK {
		t.Fatalf("task page: %d %s", r.status, r.body)
	}
	info, err := q.Get(context.Background(), "dead/1")
	if err != nil {
		t.Fatal(err)
	}
	cells := cellsByID(r.body)
	if cells["key"] != "dead/1" || cells["state"] != "dead" || !strings.HasPrefix(cells["attempts"], "1") ||
		cells["lasterror"] != "HTTP 410 &lt;b&gt;gone&lt;/b&gt;" {
		t.Errorf("task page cells %v, Get says %+v", cells, info)
	}
	if len(info.History) != 1 {
		t.Fatalf("Get's history %+v, want one delivery", info.History)
	}
	d := info.History[0]
	// Times in UTC by default, then how long ago (relative to the test's clock).
	row := fmt.Sprintf("<td class=\"n\">1</td>\n<td><code>%s</code></td>\n<td>%s, ", d.Worker, d.Start.UTC().Format("2006-01-02 15:04:05.000Z"))
	if !strings.Contains(r.body, row) || !strings.Contains(r.body, "<td>dead</td>") {
		t.Errorf("delivery log lacks %q and the outcome dead: %s", row, r.body)
	}
	if !strings.Contains(r.body, `<button class="requeue">`) || !strings.Contains(r.body, `<button class="cancel">`) {
		t.Errorf("a dead task's page lacks Requeue or Cancel")
	}

	r = get(t, h, "/ui/task?key=done/1", true)
	if cellsByID(r.body)["state"] != "done" || !strings.Contains(r.body, "<td>done</td>") {
		t.Errorf("done task page: %s", r.body)
	}
	if strings.Contains(r.body, `<button class="requeue">`) || strings.Contains(r.body, `<button class="cancel">`) {
		t.Errorf("a done task's page offers Requeue or Cancel")
	}

	for path, status := range map[string]int{
		"/ui/task?key=never-added": http.StatusNotFound,
		"/ui/task":                 http.StatusBadRequest,
		"/ui/task?key=" + strings.Repeat("k", 2000): http.StatusBadRequest,
		"/ui/no-such-page":                          http.StatusNotFound,
	} {
		if r := get(t, h, path, true); r.status != status || !strings.Contains(r.body, `id="error"`) {
			t.Errorf("GET %.40s: %d, want %d and the error page", path, r.status, status)
		}
	}
	if r := get(t, h, "/ui/task?key=never-added", true); !strings.Contains(r.body, `No task &#34;never-added&#34;`) {
		t.Errorf("404 page: %s", r.body)
	}
}

// A list shows one state a page at a time; its next link leads through
// every task exactly once.
func TestTaskListPages(t *testing.T) {
	q := newQueue(t, standalone(t))
	fixture(t, q, nil, nil, 0, pageSize+10)
	h := newDashboard(t, q)

	seen := map[string]int{}
	path := "/ui/tasks?state=scheduled"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("more than 5 pages for 60 tasks")
		}
		r := get(t, h, path, true)
		if r.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		for _, line := range strings.Split(r.body, "\n") {
			if k, ok := strings.CutPrefix(line, `<tr data-key="`); ok {
				seen[strings.TrimSuffix(k, `">`)]++
			}
		}
		path = ""
		if m := nextRE.FindStringSubmatch(r.body); m != nil {
			path = html.UnescapeString(m[1])
		}
	}
	if len(seen) != pageSize+10 {
		t.Fatalf("saw %d tasks, want %d", len(seen), pageSize+10)
	}
	for k, n := range seen {
		if n != 1 || !strings.HasPrefix(k, "later/") {
			t.Errorf("task %q seen %d times", k, n)
		}
	}

	for _, path := range []string{"/ui/tasks?state=nope", "/ui/tasks?state=scheduled&cursor=garbage", "/ui/dead?cursor=garbage"} {
		if r := get(t, h, path, true); r.status != http.StatusBadRequest {
			t.Errorf("GET %s: %d, want 400", path, r.status)
		}
	}
	// Every state's list renders, in the API's spelling.
	for _, s := range states {
		if r := get(t, h, "/ui/tasks?state="+stateSlug(s), true); r.status != http.StatusOK {
			t.Errorf("list of %s: %d", s, r.status)
		}
	}
}

// nextRE finds a list page's next link ("/ui/tasks?...&amp;cursor=...").
var nextRE = regexp.MustCompile(`<a id="next" href="([^"]*)"`)
