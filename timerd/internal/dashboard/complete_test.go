package dashboard

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// detached runs a worker on q whose handler detaches every task for an
// hour (a callback that answered 202), and returns each delivery's
// completion token by key once it is in.
func detached(t *testing.T, q *durable.Queue, keys ...string) map[string]string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	tokens := map[string]string{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_ = q.Run(ctx, func(_ context.Context, task durable.Task) error {
			mu.Lock()
			tokens[task.Key] = task.Token
			mu.Unlock()
			return durable.Detach(time.Hour)
		})
	}()
	t.Cleanup(func() { cancel(); wg.Wait() })
	for _, k := range keys {
		if _, err := q.Add(context.Background(), k, nil, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, time.Minute, "the deliveries to detach", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(tokens) == len(keys)
	})
	mu.Lock()
	defer mu.Unlock()
	out := map[string]string{}
	for k, v := range tokens {
		out[k] = v
	}
	return out
}

// A task waiting on a 202 shows an operator the form that completes or
// fails it with its completion token; the form does what the API's
// /complete and /fail do, refusing a wrong token (400) and a spent one
// (409); a read-only session sees no form.
func TestCompleteFromTheDashboard(t *testing.T) {
	q := newQueue(t, standalone(t))
	checker := roleChecker(t)
	h := newDashboardWith(t, Config{Queue: q, Auth: checker})
	tokens := detached(t, q, "async/1", "async/2", "async/3")
	ops := cookieAs(t, checker, roleCredentials[1])
	page := func(ck *http.Cookie, key string) string {
		req := newRequest(t, http.MethodGet, "/ui/task?key="+url.QueryEscape(key), nil, false)
		req.AddCookie(ck)
		return do(t, h, req).body
	}
	eventually(t, time.Minute, "the page to offer the form", func() bool {
		return strings.Contains(page(ops, "async/1"), `id="complete-form"`)
	})
	if strings.Contains(page(cookieAs(t, checker, roleCredentials[2]), "async/1"), `id="complete-form"`) {
		t.Error("a read-only session is offered the completion form")
	}
	state := func(key string) durable.TaskInfo {
		info, err := q.Get(context.Background(), key)
		if err != nil {
			t.Fatal(err)
		}
		return info
	}

	r := postAs(t, h, ops, "/ui/complete", url.Values{"key": {"async/1"}, "token": {tokens["async/2"]}, "outcome": {"done"}})
	if r.status != http.StatusConflict && r.status != http.StatusBadRequest {
		t.Errorf("another task's token: %d, want 400 or 409", r.status)
	}
	r = postAs(t, h, ops, "/ui/complete", url.Values{"key": {"async/1"}, "token": {"nonsense"}, "outcome": {"done"}})
	if r.status != http.StatusBadRequest {
		t.Errorf("a malformed token: %d, want 400", r.status)
	}
	if s := state("async/1").State; s != durable.StateInFlight {
		t.Fatalf("async/1 after refused completions: %s, want still in flight", s)
	}

	r = postAs(t, h, ops, "/ui/complete", url.Values{"key": {"async/1"}, "token": {tokens["async/1"]}, "outcome": {"done"}})
	checkRedirect(t, r, "/ui/task?done=completed&key=async%2F1")
	if s := state("async/1").State; s != durable.StateDone {
		t.Errorf("async/1 after Complete: %s, want done", s)
	}
	r = postAs(t, h, ops, "/ui/complete", url.Values{"key": {"async/1"}, "token": {tokens["async/1"]}, "outcome": {"done"}})
	if r.status != http.StatusConflict {
		t.Errorf("the same token again: %d, want 409", r.status)
	}

	r = postAs(t, h, ops, "/ui/complete", url.Values{"key": {"async/2"}, "token": {tokens["async/2"]}, "outcome": {"fail"},
		"error": {"no stock"}, "permanent": {"yes"}})
	checkRedirect(t, r, "/ui/task?done=failed_dead&key=async%2F2")
	if info := state("async/2"); info.State != durable.StateDead || info.LastError != "no stock" {
		t.Errorf("async/2 after a permanent Fail: %s %q, want dead with the error typed", info.State, info.LastError)
	}
	r = postAs(t, h, ops, "/ui/complete", url.Values{"key": {"async/3"}, "token": {tokens["async/3"]}, "outcome": {"fail"}})
	checkRedirect(t, r, "/ui/task?done=failed_retry&key=async%2F3")
	// The worker may have claimed it again already: its first delivery's
	// outcome is what Fail did.
	if info := state("async/3"); len(info.History) == 0 || info.History[0].Outcome != "retry" || !strings.Contains(info.LastError, "ops") {
		t.Errorf("async/3 after Fail: %s %q %+v, want retried, the error naming the token", info.State, info.LastError, info.History)
	}
}
