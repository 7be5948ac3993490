package dashboard

import (
	"context"
	"fmt"
	"html"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/search"
)

// A list shows one-off tasks by default and schedule runs apart; it filters
// by key prefix and by error text, ignoring case; filters are escaped where
// the page shows them back.
func TestListFilters(t *testing.T) {
	ctx := context.Background()
	q := newQueue(t, standalone(t))
	for _, k := range []string{"orders/1", "orders/2", "users/1", "periodic:tick~abc@1000", "periodic:tick~abc@2000"} {
		if _, err := q.AddAfter(ctx, k, nil, time.Hour); err != nil {
			t.Fatal(err)
		}
	}
	finish(t, q, map[string]error{"e/timeout": failed("Post: i/o TIMEOUT"), "e/gone": failed("HTTP 410"), "periodic:tick~abc@3000": nil, "once": nil})
	h := newDashboard(t, q)
	keys := func(path string) []string {
		t.Helper()
		r := get(t, h, path, true)
		if r.status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
		k := rowKeys(r.body)
		slices.Sort(k)
		return k
	}
	for path, want := range map[string][]string{
		"/ui/tasks?state=scheduled":                             {"orders/1", "orders/2", "users/1"},
		"/ui/tasks?state=scheduled&kind=schedule":               {"periodic:tick~abc@1000", "periodic:tick~abc@2000"},
		"/ui/tasks?state=scheduled&kind=all":                    {"orders/1", "orders/2", "periodic:tick~abc@1000", "periodic:tick~abc@2000", "users/1"},
		"/ui/tasks?state=scheduled&prefix=orders/":              {"orders/1", "orders/2"},
		"/ui/tasks?state=scheduled&kind=all&prefix=periodic:ti": {"periodic:tick~abc@1000", "periodic:tick~abc@2000"},
		"/ui/tasks?state=done":                                  {"once"},
		"/ui/tasks?state=done&kind=schedule":                    {"periodic:tick~abc@3000"},
		"/ui/tasks?state=dead&error=timeout":                    {"e/timeout"},
		"/ui/tasks?state=dead&error=410&prefix=e/":              {"e/gone"},
		"/ui/tasks?state=dead&error=nowhere":                    nil,
	} {
		if got := keys(path); !slices.Equal(got, want) {
			t.Errorf("GET %s: rows %q, want %q", path, got, want)
		}
	}
	r := get(t, h, "/ui/tasks?state=scheduled&prefix=orders/", true)
	mustContain(t, "filtered list", r.body, `<p class="muted" id="scanned">Scanned 5 scheduled tasks from this page's start; 2 matched.`,
		`<input name="prefix" id="prefix" value="orders/"`, `<a href="/ui/tasks?kind=schedule&amp;prefix=orders%2F&amp;state=scheduled" id="kind-schedule">`)
	r = get(t, h, "/ui/tasks?"+url.Values{"state": {"dead"}, "prefix": {hostileKey}, "error": {`"><b>x`}}.Encode(), true)
	mustContain(t, "hostile filter", r.body, `value="&lt;script&gt;alert(1)&lt;/script&gt;"`, `value="&#34;&gt;&lt;b&gt;x"`)
	mustNotContain(t, "hostile filter", r.body, hostileKey, `"><b>x`)
	for _, path := range []string{"/ui/tasks?kind=nope", "/ui/tasks?prefix=" + strings.Repeat("p", search.MaxFilter+1)} {
		if r := get(t, h, path, true); r.status != 400 {
			t.Errorf("GET %.60s: %d, want 400", path, r.status)
		}
	}
}

// A filter that matches nothing reads at most search.MaxScan tasks a page, says
// so, and offers to scan on from there; scanning on reaches the end.
func TestFilterScanIsBounded(t *testing.T) {
	ctx := context.Background()
	q := newQueue(t, standalone(t))
	total := search.MaxScan + 3*pageSize
	items := make([]rediswheel.Item, total)
	for i := range items {
		items[i] = rediswheel.Item{Key: fmt.Sprintf("bulk/%05d", i), At: time.Now().Add(time.Hour)}
	}
	if _, err := q.AddBatch(ctx, items); err != nil {
		t.Fatal(err)
	}
	h := newDashboard(t, q)
	path, scannedAll := "/ui/tasks?state=scheduled&prefix=none/", 0
	for pages := 0; path != ""; pages++ {
		if pages > total/pageSize+2 {
			t.Fatalf("more than %d pages to scan %d tasks", pages, total)
		}
		r := get(t, h, path, true)
		var n, matched int
		if _, err := fmt.Sscanf(cellsByID(r.body)["scanned"], "Scanned %d scheduled tasks from this page's start; %d matched.", &n, &matched); err != nil {
			t.Fatalf("GET %s: no scan count (%v):\n%s", path, err, r.body)
		}
		if n > search.MaxScan || matched != 0 {
			t.Fatalf("GET %s scanned %d (at most %d) and matched %d", path, n, search.MaxScan, matched)
		}
		scannedAll += n
		path = ""
		if m := nextRE.FindStringSubmatch(r.body); m != nil {
			mustContain(t, "a page stopped by the bound", r.body, "Stopped there: a page reads at most 10000.", ">Scan on</a>")
			path = html.UnescapeString(m[1])
		}
		if pages == 0 && path == "" {
			t.Fatalf("the first page scanned all %d tasks: no bound", total)
		}
	}
	if scannedAll != total {
		t.Errorf("scanned %d tasks in all, want each of the %d once", scannedAll, total)
	}
}
