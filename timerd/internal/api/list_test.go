package api

import (
	"context"
	"fmt"
	"github.com/go-timingwheel/timingwheel/durable"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestListPaging pages through the scheduled tasks, 7 at a time, while
// other tasks are added and cancelled: every task that stays scheduled is
// listed exactly once, no key is listed twice, and the order is by due time.
func TestListPaging(t *testing.T) {
	eachStore(t, func(t *testing.T, s testStore) {
		f := newFixture(t, s, durable.Options{})
		ctx := context.Background()
		base := time.Now().Add(24 * time.Hour).Truncate(time.Second)
		stay := map[string]bool{}
		for i := range 120 {
			key := fmt.Sprintf("stay-%03d", i)
			stay[key] = true
			// Pairs share a due time, so the key breaks the tie.
			_, err := f.q.AddHTTP(ctx, key, rediswheel.HTTPTask{URL: "https://e.com/", Method: "GET"}, base.Add(time.Duration(i/2)*time.Second))
			require.NoError(t, err)
		}
		for i := range 60 {
			_, err := f.q.AddHTTP(ctx, fmt.Sprintf("churn-%03d", i), rediswheel.HTTPTask{URL: "https://e.com/", Method: "GET"}, base.Add(time.Duration(i)*time.Second))
			require.NoError(t, err)
		}

		stop := make(chan struct{})
		var wg sync.WaitGroup
		wg.Add(1)
		go func() { // the churn: cancel old ones, add new ones among the stayers
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				_, _ = f.q.Cancel(ctx, fmt.Sprintf("churn-%03d", i%60))
				_, _ = f.q.AddHTTP(ctx, fmt.Sprintf("new-%04d", i), rediswheel.HTTPTask{URL: "https://e.com/", Method: "GET"}, base.Add(time.Duration(i%60)*time.Second+time.Millisecond))
			}
		}()

		seen := map[string]int{}
		var last time.Time
		cursor, pages := "", 0
		for {
			r := f.do("GET", "/v1/tasks?state=scheduled&limit=7&cursor="+url.QueryEscape(cursor), "")
			require.Equal(t, http.StatusOK, r.status, "%s", r.raw)
			for _, x := range r.body["tasks"].([]any) {
				task := x.(map[string]any)
				seen[task["key"].(string)]++
				assert.Equal(t, "scheduled", task["state"])
				due, err := time.Parse(time.RFC3339, task["due_at"].(string))
				require.NoError(t, err)
				assert.False(t, due.Before(last), "by due time")
				last = due
			}
			pages++
			cursor = r.body["next_cursor"].(string)
			if cursor == "" {
				break
			}
			require.Less(t, pages, 1000, "the listing ends")
		}
		close(stop)
		redistest.Within(t, "the churn to stop", wg.Wait)

		for key := range stay {
			assert.Equal(t, 1, seen[key], "%s listed once", key)
		}
		for key, n := range seen {
			assert.Equal(t, 1, n, "%s listed %d times", key, n)
		}
		assert.Greater(t, pages, 120/7, "paged")
	})
}
