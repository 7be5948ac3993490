package api

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// GET /v1/tasks with kind, prefix or error searches the state server-side:
// each page holds at most limit matches, says how many tasks it read
// (scanned), and next_cursor goes on to the end, where every match has been
// listed once; a bad filter is a 400 naming it.
func TestSearch(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		ctx := context.Background()
		base := time.Now().Add(time.Hour)
		want := map[string]bool{}
		for i := range 40 {
			key := fmt.Sprintf("hay/%02d", i)
			if i%8 == 3 {
				key = fmt.Sprintf("orders/%02d", i)
				want[key] = true
			}
			_, err := f.q.AddHTTP(ctx, key, rediswheel.HTTPTask{URL: "https://e.com/", Method: "GET"}, base.Add(time.Duration(i)*time.Second))
			require.NoError(t, err)
		}
		got, scanned, cursor := map[string]bool{}, 0, ""
		for pages := 0; ; pages++ {
			require.Less(t, pages, 40, "the search does not end")
			r := f.do("GET", "/v1/tasks?state=scheduled&prefix=orders/&limit=2&cursor="+url.QueryEscape(cursor), "")
			require.Equal(t, 200, r.status, "%s", r.raw)
			tasks := r.body["tasks"].([]any)
			assert.LessOrEqual(t, len(tasks), 2)
			for _, tk := range tasks {
				key := tk.(map[string]any)["key"].(string)
				assert.False(t, got[key], "%s listed twice", key)
				got[key] = true
			}
			scanned += int(r.body["scanned"].(float64))
			if cursor = r.body["next_cursor"].(string); cursor == "" {
				break
			}
		}
		assert.Equal(t, want, got)
		assert.Equal(t, 40, scanned, "every task read once")

		r := f.do("GET", "/v1/tasks?state=scheduled&limit=5", "")
		_, hasScanned := r.body["scanned"]
		assert.False(t, hasScanned, "an unfiltered listing says nothing of a scan")
		r = f.do("GET", "/v1/tasks?state=scheduled&kind=schedule", "")
		assert.Empty(t, r.body["tasks"], "no schedule runs")
		r = f.do("GET", "/v1/tasks?state=scheduled&kind=oneoff&error=nothing", "")
		assert.Empty(t, r.body["tasks"])
		assert.Equal(t, 40.0, r.body["scanned"])

		for q, field := range map[string]string{
			"kind=nope": "kind", "prefix=" + strings.Repeat("p", 1025): "prefix", "error=" + strings.Repeat("e", 1025): "error",
			"prefix=a&cursor=nonsense": "cursor",
		} {
			r := f.do("GET", "/v1/tasks?state=dead&"+q, "")
			assert.Equal(t, 400, r.status, "%.40s: %s", q, r.raw)
			assert.Equal(t, field, r.errField(), "%.40s", q)
		}
	})
}
