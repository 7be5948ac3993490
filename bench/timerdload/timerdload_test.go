package timerdload

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fakeTimerd is the part of timerd's API the load test uses, with time.AfterFunc for a wheel,
// so the harness itself can be checked: shift moves every callback (negative: early), and drop
// loses the callback of every key that ends with it.
type fakeTimerd struct {
	shift time.Duration
	drop  string

	mu     sync.Mutex
	timers map[string]*time.Timer
	wg     sync.WaitGroup
}

func (f *fakeTimerd) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer t0ken" {
		w.WriteHeader(http.StatusUnauthorized)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/v1/tasks":
		var req createRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		due, err := time.Parse(time.RFC3339Nano, req.DueAt)
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		if _, ok := f.timers[req.Key]; ok {
			w.WriteHeader(http.StatusOK)
			return
		}
		f.wg.Add(1)
		f.timers[req.Key] = time.AfterFunc(time.Until(due)+f.shift, func() {
			defer f.wg.Done()
			if f.drop != "" && strings.HasSuffix(req.Key, f.drop) {
				return
			}
			cb, _ := http.NewRequest(req.Callback.Method, req.Callback.URL, strings.NewReader(req.Callback.Body))
			cb.Header.Set("Idempotency-Key", req.Key)
			if resp, err := http.DefaultClient.Do(cb); err == nil {
				resp.Body.Close()
			}
		})
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/v1/tasks/"):
		t, ok := f.timers[strings.TrimPrefix(r.URL.Path, "/v1/tasks/")]
		if !ok || !t.Stop() {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		f.wg.Done()
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func runFake(t *testing.T, f *fakeTimerd) (Result, error) {
	t.Helper()
	f.timers = map[string]*time.Timer{}
	api := httptest.NewServer(f)
	defer api.Close()
	defer http.DefaultClient.CloseIdleConnections()
	defer f.wg.Wait()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return Run(context.Background(), Config{BaseURL: api.URL, Token: "t0ken", Receiver: ln,
		Tasks: 300, SpreadTasks: 200, Spread: 500 * time.Millisecond, Clients: 8, Wait: 2 * time.Second})
}

func TestRunMeasuresEveryWorkload(t *testing.T) {
	res, err := runFake(t, &fakeTimerd{})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%+v", res)
	if res.CreatesPerSec <= 0 || res.CancelsPerSec <= 0 || res.DeliveredPerSec <= 0 {
		t.Errorf("a rate is missing: %+v", res)
	}
	if res.Early != 0 || res.Duplicates != 0 {
		t.Errorf("early %d, duplicates %d from a fake that is neither", res.Early, res.Duplicates)
	}
	if res.LatenessP50 < 0 || res.LatenessP50 > res.LatenessP99 || res.LatenessP99 > res.LatenessMax {
		t.Errorf("lateness quantiles out of order: %+v", res)
	}
}

func TestRunCountsEarlyCallbacks(t *testing.T) {
	// 400 ms early: a callback that takes longer than that to arrive (a burst of 300 on a
	// loaded machine under -race) is no longer early, so allow a tenth of them that.
	res, err := runFake(t, &fakeTimerd{shift: -400 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if res.Early < 450 || res.Early > 500 {
		t.Errorf("Early = %d, want about every one of the 500 delivered tasks", res.Early)
	}
}

func TestRunFailsWhenACallbackNeverArrives(t *testing.T) {
	_, err := runFake(t, &fakeTimerd{drop: "-burst-7"})
	if err == nil || !strings.Contains(err.Error(), "1 of 300 callbacks never arrived") {
		t.Fatalf("err = %v, want the lost callback reported", err)
	}
}
