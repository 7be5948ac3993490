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
// so the harness itself can be checked: early calls back every task due within a minute before
// acknowledging its create, so before its due time whatever the machine's load, and drop loses
// the callback of every key that ends with it.
type fakeTimerd struct {
	early bool
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
		callBack := func() {
			if f.drop != "" && strings.HasSuffix(req.Key, f.drop) {
				return
			}
			cb, _ := http.NewRequest(req.Callback.Method, req.Callback.URL, strings.NewReader(req.Callback.Body))
			cb.Header.Set("Idempotency-Key", req.Key)
			if resp, err := http.DefaultClient.Do(cb); err == nil {
				resp.Body.Close()
			}
		}
		if f.early && time.Until(due) < time.Minute {
			f.timers[req.Key] = nil
			f.mu.Unlock()
			callBack()
			f.mu.Lock()
			w.WriteHeader(http.StatusCreated)
			return
		}
		f.wg.Add(1)
		f.timers[req.Key] = time.AfterFunc(time.Until(due), func() {
			defer f.wg.Done()
			callBack()
		})
		w.WriteHeader(http.StatusCreated)
	case r.Method == http.MethodDelete && strings.HasPrefix(r.URL.Path, "/v1/tasks/"):
		t, ok := f.timers[strings.TrimPrefix(r.URL.Path, "/v1/tasks/")]
		if !ok || t == nil || !t.Stop() {
			w.WriteHeader(http.StatusNotFound)
			return
		}
		f.wg.Done()
		w.WriteHeader(http.StatusOK)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

// callbackWait is how long after its due time a callback may arrive before Run reports it
// lost: a lost callback is what it catches, so it is generous enough that a loaded machine
// under -race never makes one that late.
const callbackWait = 30 * time.Second

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
		Tasks: 300, SpreadTasks: 200, Spread: 500 * time.Millisecond, Clients: 8, Wait: callbackWait})
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
	// Each callback arrives before its create returns. The 300 of the burst are then early for
	// certain, as Run fails unless every create returned before their due time; the 200 of the
	// lateness workload are due from 2 s after their creates begin, so early but for a create
	// that takes longer than that.
	res, err := runFake(t, &fakeTimerd{early: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Early <= 300 || res.Early > 500 {
		t.Errorf("Early = %d, want the burst's 300 and most of the lateness workload's 200", res.Early)
	}
	t.Logf("Early = %d of 500", res.Early)
}

func TestRunFailsWhenACallbackNeverArrives(t *testing.T) {
	_, err := runFake(t, &fakeTimerd{drop: "-burst-7"})
	if err == nil || !strings.Contains(err.Error(), "1 of 300 callbacks never arrived") {
		t.Fatalf("err = %v, want the lost callback reported", err)
	}
}
