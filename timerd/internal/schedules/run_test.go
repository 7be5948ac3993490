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

func (c call) String() string { return c.path + " " + c.key + " at " + c.at.Format(time.RFC3339Nano) }

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

// waitCalls polls rec until done holds for the calls since t, or fails
// after redistest.WaitBound: a bound for a loaded machine, not a measure of
// speed.
func (r *receiver) waitCalls(tb testing.TB, since time.Time, what string, done func([]call) bool) []call {
	tb.Helper()
	deadline := time.Now().Add(redistest.WaitBound)
	for {
		calls := r.since(since)
		if done(calls) {
			return calls
		}
		if time.Now().After(deadline) {
			tb.Fatalf("waited %v for %s; got %v", redistest.WaitBound, what, calls)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// on returns the calls to path.
func on(calls []call, path string) []call {
	var out []call
	for _, c := range calls {
		if c.path == path {
			out = append(out, c)
		}
	}
	return out
}

// inARow reports whether the occurrences of calls hold n consecutive
// seconds.
func inARow(t *testing.T, calls []call, n int) bool {
	run := 1
	for i := 1; i < len(calls) && run < n; i++ {
		_, prev := occurrence(t, calls[i-1].key)
		_, at := occurrence(t, calls[i].key)
		if at.Sub(prev) == time.Second {
			run++
		} else {
			run = 1
		}
	}
	return len(calls) > 0 && run >= n
}

// takenBack checks that the occurrence of periodic at the time after last,
// if it was still ahead when a Put or Delete returned, was cancelled by it
// at once rather than at the next poll.
func takenBack(t *testing.T, q *rediswheel.Queue, periodic string, last, returned time.Time, what string) {
	t.Helper()
	next := last.Add(time.Second)
	if !next.After(returned) {
		t.Logf("%s: the next time, %v, came before it returned at %v: not checked", what, next, returned)
		return
	}
	key := "periodic:" + periodic + "@" + strconv.FormatInt(next.UnixMilli(), 10)
	info, err := q.Get(context.Background(), key)
	assert.ErrorIs(t, err, rediswheel.ErrNotFound, "%s: %s, pending when it returned, is still there: %+v", what, key, info)
}

// TestRunOnceAcrossProcesses runs a schedule of every second with two Store
// loops, as two timerd processes would, and checks each time is delivered
// exactly once, none early, none skipped; then that a change and a delete
// take effect: no occurrence of the old version, or of the deleted
// schedule, runs whose time came after the Put or Delete returned. Nothing
// here is timed: each step waits for the deliveries it needs (a minute at
// most), and the checks read the occurrences' own times from their keys.
func TestRunOnceAcrossProcesses(t *testing.T) {
	redistest.Each(t, func(t *testing.T, c redis.UniversalClient) {
		ns := redistest.Namespace(t, c)
		rec := &receiver{}
		srv := httptest.NewServer(rec)
		defer srv.Close()

		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		defer func() { cancel(); redistest.Within(t, "the Runs to return", wg.Wait) }()
		var stores []*Store
		for range 2 {
			q := newQueue(t, c, ns)
			s := New(RedisDefinitions(c, ns), q, nil)
			stores = append(stores, s)
			mux := rediswheel.NewMux()
			mux.Handle(rediswheel.HTTPTaskType, rediswheel.HTTPHandler(srv.Client()))
			wg.Add(2)
			go func() { defer wg.Done(); assert.NoError(t, q.Run(ctx, mux.Handler)) }()
			go func() { defer wg.Done(); assert.NoError(t, s.Run(ctx)) }()
		}
		put := func(s *Store, name, path string) time.Time {
			_, err := s.Put(ctx, Definition{Name: name, Every: time.Second,
				Callback: rediswheel.HTTPTask{URL: srv.URL + path, Method: "POST"}})
			require.NoError(t, err)
			return time.Now()
		}

		start := time.Now()
		put(stores[0], "tick", "/tick")
		ticks := rec.waitCalls(t, start, "three consecutive times of the schedule",
			func(cs []call) bool { return inARow(t, cs, 3) })
		seen := map[string]bool{}
		for i, cl := range ticks {
			assert.Equal(t, "/tick", cl.path)
			assert.False(t, seen[cl.key], "delivered twice: %s", cl.key)
			seen[cl.key] = true
			p, at := occurrence(t, cl.key)
			assert.True(t, strings.HasPrefix(p, "tick~"), p)
			assert.False(t, cl.at.Before(at), "%s delivered early, at %v", cl.key, cl.at)
			if i == 0 {
				continue
			}
			// Each second follows the last, unless both loops stalled past
			// a time by more than rediswheel's catch-up grace (2s): then the
			// times missed run once, as the latest, 3s or more on.
			_, prev := occurrence(t, ticks[i-1].key)
			if gap := at.Sub(prev); gap != time.Second {
				assert.GreaterOrEqual(t, gap, 3*time.Second, "a time skipped: %v", ticks)
				t.Logf("a catch-up after a stall: %v after %v", at, prev)
			}
		}

		// A change: the new version takes over; the old stops. Only an
		// occurrence already due when Put returned may still run.
		oldPeriodic, _ := occurrence(t, ticks[0].key)
		_, last := occurrence(t, ticks[len(ticks)-1].key)
		changed := time.Now()
		changeReturned := put(stores[1], "tick", "/tock")
		takenBack(t, stores[0].q, oldPeriodic, last, changeReturned, "the change")
		calls := rec.waitCalls(t, changed, "two runs of the changed schedule",
			func(cs []call) bool { return len(on(cs, "/tock")) >= 2 })
		for _, cl := range calls {
			p, at := occurrence(t, cl.key)
			if cl.path == "/tick" {
				assert.False(t, at.After(changeReturned), "old version's %v ran, its time after the change returned at %v", cl, changeReturned)
				continue
			}
			assert.NotEqual(t, oldPeriodic, p, "the new version names the occurrences")
		}

		// A delete: no more runs. A second schedule, run by the same loops,
		// shows them going on meanwhile.
		canaryFrom := put(stores[0], "canary", "/canary")
		rec.waitCalls(t, canaryFrom, "the canary schedule's first run",
			func(cs []call) bool { return len(on(cs, "/canary")) >= 1 })
		// Right after a run, so that the next one is pending.
		calls = rec.waitCalls(t, time.Now(), "a run of the changed schedule",
			func(cs []call) bool { return len(on(cs, "/tock")) >= 1 })
		tocks := on(calls, "/tock")
		newPeriodic, last := occurrence(t, tocks[len(tocks)-1].key)
		deleted := time.Now()
		ok, err := stores[0].Delete(ctx, "tick")
		require.NoError(t, err)
		require.True(t, ok)
		deleteReturned := time.Now()
		takenBack(t, stores[0].q, newPeriodic, last, deleteReturned, "the delete")
		calls = rec.waitCalls(t, deleted, "two canary times after the delete", func(cs []call) bool {
			n := 0
			for _, cl := range on(cs, "/canary") {
				if _, at := occurrence(t, cl.key); at.After(deleteReturned) {
					n++
				}
			}
			return n >= 2
		})
		for _, cl := range on(calls, "/tock") {
			_, at := occurrence(t, cl.key)
			assert.False(t, at.After(deleteReturned), "%v ran, its time after the delete returned at %v", cl, deleteReturned)
		}
	})
}
