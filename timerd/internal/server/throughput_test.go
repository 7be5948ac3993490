package server

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
)

// A running timerd's overview charts its own deliveries: a done one and a
// dead one are 2 processed, 1 failed.
func TestRunChartsDeliveries(t *testing.T) {
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/gone") {
			http.NotFound(w, r)
		}
	}))
	defer hook.Close()
	cfg := sqliteConfig(t)
	cfg.AllowCallback = []string{hook.Listener.Addr().String()}
	s := newServer(t, cfg)
	base := "http://" + runLogged(t, s)
	ctx := context.Background()
	for _, k := range []string{"ok", "gone"} {
		_, err := s.queue.AddHTTPAfter(ctx, k, durable.HTTPTask{URL: hook.URL + "/" + k, Method: "POST"}, 0)
		require.NoError(t, err)
	}
	want := []string{`id="throughput-processed">2<`, `id="throughput-failed">1<`}
	require.Eventually(t, func() bool {
		req, err := http.NewRequest("GET", base+"/ui/", nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+cfg.Token)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		body := string(b)
		return strings.Contains(body, want[0]) && strings.Contains(body, want[1])
	}, redistest.WaitBound, 20*time.Millisecond, "the overview's totals: %q", want)
}
