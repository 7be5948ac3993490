package schedules

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// call is one callback received.
type call struct {
	path, key string
	at        time.Time
}

// receiver records the callbacks an httptest server gets.
type receiver struct {
	mu    sync.Mutex
	calls []call
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, call{req.URL.Path, req.Header.Get(rediswheel.HeaderIdempotencyKey), time.Now()})
}

func (r *receiver) since(t time.Time) []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []call
	for _, c := range r.calls {
		if !c.at.Before(t) {
			out = append(out, c)
		}
	}
	return out
}

// occurrence splits an occurrence's key, "periodic:<name>~<version>@<ms>".
func occurrence(t *testing.T, key string) (periodic string, at time.Time) {
	rest, ok := strings.CutPrefix(key, "periodic:")
	require.True(t, ok, key)
	i := strings.LastIndexByte(rest, '@')
	require.Positive(t, i, key)
	ms, err := strconv.ParseInt(rest[i+1:], 10, 64)
	require.NoError(t, err, key)
	return rest[:i], time.UnixMilli(ms)
}

// TestRunOnceAcrossProcesses runs a schedule of every second with two Store
// loops, as two timerd processes would, and checks each time is delivered
// exactly once, none early, none skipped; then that a change and a delete
// take effect.
func TestRunOnceAcrossProcesses(t *testing.T) {
	redistest.Each(t, func(t *testing.T, c redis.UniversalClient) {
		ns := redistest.Namespace(t, c)
		rec := &receiver{}
		srv := httptest.NewServer(rec)
		defer srv.Close()

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		defer func() { cancel(); wg.Wait() }()
		var stores []*Store
		for range 2 {
			q := newQueue(t, c, ns)
			s := New(c, q, ns, nil)
			stores = append(stores, s)
			mux := rediswheel.NewMux()
			mux.Handle(rediswheel.HTTPTaskType, rediswheel.HTTPHandler(srv.Client()))
			wg.Add(2)
			go func() { defer wg.Done(); assert.NoError(t, q.Run(ctx, mux.Handler)) }()
			go func() { defer wg.Done(); assert.NoError(t, s.Run(ctx)) }()
		}

		start := time.Now()
		_, err := stores[0].Put(ctx, Definition{Name: "tick", Every: time.Second,
			Callback: rediswheel.HTTPTask{URL: srv.URL + "/tick", Method: "POST"}})
		require.NoError(t, err)
		time.Sleep(4500 * time.Millisecond)

		ticks := rec.since(start)
		require.GreaterOrEqual(t, len(ticks), 3, "a schedule of every second in 4.5s: %v", ticks)
		seen := map[string]bool{}
		var times []time.Time
		for _, cl := range ticks {
			assert.Equal(t, "/tick", cl.path)
			assert.False(t, seen[cl.key], "delivered twice: %s", cl.key)
			seen[cl.key] = true
			p, at := occurrence(t, cl.key)
			assert.True(t, strings.HasPrefix(p, "tick~"), p)
			assert.False(t, cl.at.Before(at), "%s delivered early, at %v", cl.key, cl.at)
			times = append(times, at)
		}
		for i := 1; i < len(times); i++ {
			assert.Equal(t, time.Second, times[i].Sub(times[i-1]), "consecutive seconds, none skipped: %v", times)
		}

		// A change: the new version takes over; the old stops.
		oldPeriodic, _ := occurrence(t, ticks[0].key)
		changed := time.Now()
		_, err = stores[1].Put(ctx, Definition{Name: "tick", Every: time.Second,
			Callback: rediswheel.HTTPTask{URL: srv.URL + "/tock", Method: "POST"}})
		require.NoError(t, err)
		time.Sleep(3500 * time.Millisecond)
		var tocks int
		for _, cl := range rec.since(changed) {
			if cl.path == "/tick" {
				// Only an occurrence already due at the change may still run.
				assert.Less(t, cl.at.Sub(changed), 1200*time.Millisecond, "old version ran after the change: %v", cl)
				continue
			}
			tocks++
			p, _ := occurrence(t, cl.key)
			assert.NotEqual(t, oldPeriodic, p, "the new version names the occurrences")
		}
		assert.GreaterOrEqual(t, tocks, 2, "the changed schedule runs")

		// A delete: no more runs.
		ok, err := stores[0].Delete(ctx, "tick")
		require.NoError(t, err)
		require.True(t, ok)
		deleted := time.Now()
		time.Sleep(2500 * time.Millisecond)
		for _, cl := range rec.since(deleted) {
			assert.Less(t, cl.at.Sub(deleted), 1200*time.Millisecond, "ran after the delete: %v", cl)
		}
	})
}
