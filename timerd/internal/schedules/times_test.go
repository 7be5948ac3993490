package schedules

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Next and Last give a definition's times by the rule Run runs it with.
func TestNextAndLast(t *testing.T) {
	cb := rediswheel.HTTPTask{URL: "https://example.com/h", Method: "POST"}
	now := time.Date(2025, 3, 10, 10, 17, 30, 0, time.UTC)
	for _, c := range []struct {
		name       string
		d          Definition
		next       time.Time
		last       []time.Time
		inTokyoNow time.Time // now given in another zone: same answers
	}{
		{"every 5m", Definition{Name: "a", Every: 5 * time.Minute, Callback: cb},
			time.Date(2025, 3, 10, 10, 20, 0, 0, time.UTC),
			[]time.Time{time.Date(2025, 3, 10, 10, 15, 0, 0, time.UTC), time.Date(2025, 3, 10, 10, 10, 0, 0, time.UTC), time.Date(2025, 3, 10, 10, 5, 0, 0, time.UTC)}, now},
		{"cron daily 09:00 UTC", Definition{Name: "b", Cron: "0 9 * * *", Callback: cb},
			time.Date(2025, 3, 11, 9, 0, 0, 0, time.UTC),
			[]time.Time{time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC), time.Date(2025, 3, 9, 9, 0, 0, 0, time.UTC), time.Date(2025, 3, 8, 9, 0, 0, 0, time.UTC)}, now},
		{"cron in a zone", Definition{Name: "c", Cron: "CRON_TZ=Asia/Tokyo 0 9 * * *", Callback: cb},
			time.Date(2025, 3, 11, 0, 0, 0, 0, time.UTC),
			[]time.Time{time.Date(2025, 3, 10, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 9, 0, 0, 0, 0, time.UTC), time.Date(2025, 3, 8, 0, 0, 0, 0, time.UTC)}, now},
	} {
		t.Run(c.name, func(t *testing.T) {
			tokyo, err := time.LoadLocation("Asia/Tokyo")
			require.NoError(t, err)
			for _, at := range []time.Time{now, now.In(tokyo)} {
				next, err := c.d.Next(at)
				require.NoError(t, err)
				assert.True(t, next.Equal(c.next), "next %v, want %v", next, c.next)
				last, err := c.d.Last(at, 3)
				require.NoError(t, err)
				require.Len(t, last, 3)
				for i := range last {
					assert.True(t, last[i].Equal(c.last[i]), "last[%d] %v, want %v", i, last[i], c.last[i])
				}
			}
		})
	}
	_, err := Definition{Name: "bad", Callback: cb}.Next(now)
	assert.ErrorIs(t, err, ErrTiming)
	_, err = Definition{Name: "bad", Cron: "nope", Callback: cb}.Last(now, 3)
	assert.ErrorIs(t, err, ErrCron)
	// A yearly spec has one time in the year Last looks back: it says so by
	// returning fewer than asked, and stops.
	last, err := Definition{Name: "y", Cron: "0 0 1 1 *", Callback: cb}.Last(now, 3)
	require.NoError(t, err)
	assert.Equal(t, []time.Time{time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}, last)
}

// RunKey names the task Run's loop adds for a time: the key the dashboard
// reads a schedule's runs under.
func TestRunKeyIsTheOccurrencesKey(t *testing.T) {
	redistest.Each(t, func(t *testing.T, c redis.UniversalClient) { testRunKey(t, c) })
}

func testRunKey(t *testing.T, c redis.UniversalClient) {
	ns := redistest.Namespace(t, c)
	q := newQueue(t, c, ns)
	s := New(RedisDefinitions(c, ns), q, nil)
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	defer func() { cancel(); redistest.Within(t, "Run to return", wg.Wait) }()
	wg.Add(1)
	go func() { defer wg.Done(); assert.NoError(t, s.Run(ctx)) }()

	// Hourly, half an hour from now, so that its next time cannot pass
	// between the Put and the check (with Every: time.Hour, a run a second
	// before the hour looked for the occurrence Run had already taken).
	minute := (time.Now().UTC().Minute() + 30) % 60
	_, err := s.Put(ctx, Definition{Name: "keyed", Cron: fmt.Sprintf("%d * * * *", minute),
		Callback: rediswheel.HTTPTask{URL: "https://example.com/h", Method: "POST"}})
	require.NoError(t, err)
	d, err := s.Get(ctx, "keyed")
	require.NoError(t, err)
	next, err := d.Next(time.Now())
	require.NoError(t, err)
	key := RunKey(d, next)
	assert.True(t, strings.HasPrefix(key, RunPrefix(d)) && strings.HasPrefix(key, AnyRunPrefix("keyed")), key)
	deadline := time.Now().Add(redistest.WaitBound)
	for {
		info, err := q.Get(ctx, key)
		if err == nil {
			assert.Equal(t, rediswheel.StateScheduled, info.State)
			assert.True(t, info.Due.Equal(next), "due %v, want %v", info.Due, next)
			return
		}
		require.ErrorIs(t, err, rediswheel.ErrNotFound)
		if time.Now().After(deadline) {
			t.Fatalf("no task %q within %v of the Put: Run's occurrences are named otherwise", key, redistest.WaitBound)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
