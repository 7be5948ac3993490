package dashboard

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/redistest"
)

// A task's page shows each delivery's status code and response body, the
// body escaped; a body that is not text by its size only.
func TestTaskPageShowsResponse(t *testing.T) {
	q := newQueue(t, standalone(t))
	ctx := context.Background()
	bodies := map[string][]byte{"text": []byte(`<script>alert("x")</script>`), "binary": {0xff, 0xfe, 0}}
	for k := range bodies {
		if _, err := q.AddAfter(ctx, k, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, stop := context.WithCancel(ctx)
	ran := make(chan error, 1)
	go func() {
		ran <- q.Run(runCtx, func(ctx context.Context, task rediswheel.Task) error {
			rediswheel.SetResult(ctx, rediswheel.Result{Code: 502, Body: bodies[task.Key]})
			return rediswheel.Permanent(errors.New("bad gateway"))
		})
	}()
	eventually(t, redistest.WaitBound, "both tasks dead", func() bool {
		st, err := q.Stats(ctx)
		return err == nil && st.Total.Dead == 2
	})
	stop()
	redistest.Within(t, "Run to return", func() {
		if err := <-ran; err != nil {
			t.Error(err)
		}
	})
	h := newDashboard(t, q)

	r := get(t, h, "/ui/task?key=text", true)
	if r.status != http.StatusOK {
		t.Fatalf("task page: %d %s", r.status, r.body)
	}
	if !strings.Contains(r.body, `<td class="n">502</td>`) ||
		!strings.Contains(r.body, `<pre>&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;</pre>`) {
		t.Errorf("the delivery log lacks the status 502 and the escaped body: %s", r.body)
	}
	if strings.Contains(r.body, "<script>") {
		t.Errorf("the response body reached the page unescaped")
	}
	if r := get(t, h, "/ui/task?key=binary", true); !strings.Contains(r.body, `<pre>(3 bytes, not text)</pre>`) {
		t.Errorf("a binary body is not shown by its size: %s", r.body)
	}
}
