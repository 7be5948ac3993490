package dashboard

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
)

// finish delivers each key of outcomes, added due now with an empty payload,
// once: a nil error makes it done, any other error dead (Permanent). It
// returns when all are so, with no worker left running.
func finish(t testing.TB, q *rediswheel.Queue, outcomes map[string]error) {
	t.Helper()
	ctx := context.Background()
	for k := range outcomes {
		if _, err := q.Add(ctx, k, nil, time.Now()); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() {
		ran <- q.Run(runCtx, func(_ context.Context, task rediswheel.Task) error {
			if err := outcomes[task.Key]; err != nil {
				return rediswheel.Permanent(err)
			}
			return nil
		})
	}()
	defer func() { stop(); redistest.Within(t, "finish's Run to return", func() { <-ran }) }()
	eventually(t, redistest.WaitBound, "finish's deliveries", func() bool {
		for k, want := range outcomes {
			info, err := q.Get(ctx, k)
			if err != nil || (want == nil) != (info.State == rediswheel.StateDone) || (want != nil) != (info.State == rediswheel.StateDead) {
				return false
			}
		}
		return true
	})
}

// failed is an error for finish.
func failed(text string) error { return errors.New(text) }

// newDashboardWith is newDashboard with more of Config.
func newDashboardWith(t testing.TB, cfg Config) http.Handler {
	t.Helper()
	if cfg.Auth == nil {
		cfg.Auth = auth.New(testToken)
	}
	if cfg.Namespace == "" {
		cfg.Namespace = "tdtest"
	}
	h, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// getWith is get with more cookies.
func getWith(t testing.TB, h http.Handler, path string, cookies ...*http.Cookie) response {
	t.Helper()
	req := newRequest(t, http.MethodGet, path, nil, true)
	for _, c := range cookies {
		req.AddCookie(c)
	}
	return do(t, h, req)
}

// rowKeys are the data-key attributes of a page's rows, unescaped only of &#43; and &amp; as keys in tests need.
func rowKeys(body string) []string {
	var out []string
	for _, line := range strings.Split(body, "\n") {
		if k, ok := strings.CutPrefix(line, `<tr data-key="`); ok {
			out = append(out, strings.TrimSuffix(k, `">`))
		}
	}
	return out
}

// mustContain fails t unless body holds every one of wants.
func mustContain(t testing.TB, what, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, body)
		}
	}
}

// mustNotContain fails t if body holds any of bad.
func mustNotContain(t testing.TB, what, body string, bad ...string) {
	t.Helper()
	for _, b := range bad {
		if strings.Contains(body, b) {
			t.Errorf("%s holds %q:\n%s", what, b, body)
		}
	}
}
