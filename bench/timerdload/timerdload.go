// Package timerdload is a load test of a running timerd, through its HTTP API only, with the
// callbacks going to a receiver in this process. Three workloads, one after the other:
//
//   - creates: Tasks tasks due in an hour, created by Clients goroutines, one POST /v1/tasks each;
//     creates/s and the create round trip's p50/p99. Then every one is cancelled (DELETE), which
//     gives cancels/s, so that the next workloads start from an empty namespace.
//   - deliveries: Tasks tasks all due at one instant, created before it; delivered/s is Tasks over
//     the time from that instant to the last callback received.
//   - lateness: SpreadTasks tasks due evenly over Spread, starting 2 s after creation began; the
//     lateness of a callback is its arrival at the receiver minus the due time asked for, on this
//     host's clock (timerd and Redis run on the same host, so on the same clock).
//
// Every run checks that it measured what it names: each workload's tasks were each created once
// (201) and called back at least once, before a deadline; none was called back before its due
// time (early) — both are counted and reported, and Run fails if a task never arrives. Callbacks
// received more than once (at-least-once delivery) are counted as duplicates.
package timerdload

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/internal/measure"
)

// Config describes one load test.
type Config struct {
	BaseURL     string        // timerd, e.g. http://127.0.0.1:8080
	Token       string        // its bearer token
	Receiver    net.Listener  // where callbacks arrive; timerd must allow its address (-allow-callback)
	Tasks       int           // tasks in the creates and deliveries workloads
	SpreadTasks int           // tasks in the lateness workload
	Spread      time.Duration // the lateness workload's tasks are due evenly over Spread
	Clients     int           // goroutines calling the API
	Wait        time.Duration // how long after its due time a callback may take before Run fails
}

// Result is one run's figures.
type Result struct {
	CreatesPerSec   float64
	CreateP50       time.Duration
	CreateP99       time.Duration
	CancelsPerSec   float64
	DeliveredPerSec float64
	LatenessP50     time.Duration
	LatenessP90     time.Duration
	LatenessP99     time.Duration
	LatenessMax     time.Duration
	Early           int // callbacks that arrived before their due time, all workloads
	Duplicates      int // callbacks received more than once, all workloads
}

// Run runs the three workloads against cfg.BaseURL. It serves cfg.Receiver until it returns.
func Run(ctx context.Context, cfg Config) (Result, error) {
	if cfg.Clients <= 0 || cfg.Tasks <= 0 || cfg.SpreadTasks <= 0 || cfg.Spread <= 0 {
		return Result{}, errors.New("timerdload: Clients, Tasks, SpreadTasks and Spread must be positive")
	}
	if cfg.Wait <= 0 {
		cfg.Wait = time.Minute
	}
	rcv := newReceiver()
	srv := &http.Server{Handler: rcv, ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(cfg.Receiver)
	defer srv.Close()
	callback := "http://" + cfg.Receiver.Addr().String() + "/callback"

	api := &client{base: cfg.BaseURL, token: cfg.Token, http: &http.Client{
		Timeout:   30 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: cfg.Clients, MaxConnsPerHost: cfg.Clients},
	}}
	defer api.http.CloseIdleConnections()
	run := fmt.Sprintf("%d", time.Now().UnixNano())
	var res Result

	// creates, then cancels
	far := time.Now().Add(time.Hour)
	keys := make([]string, cfg.Tasks)
	for i := range keys {
		keys[i] = fmt.Sprintf("load-%s-hold-%d", run, i)
	}
	rtts := make([]time.Duration, cfg.Tasks)
	start := time.Now()
	err := parallel(cfg.Clients, cfg.Tasks, func(i int) error {
		t0 := time.Now()
		err := api.create(ctx, keys[i], far, callback)
		rtts[i] = time.Since(t0)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("creates: %w", err)
	}
	res.CreatesPerSec = float64(cfg.Tasks) / time.Since(start).Seconds()
	slices.Sort(rtts)
	res.CreateP50, res.CreateP99 = measure.Quantile(rtts, 0.5), measure.Quantile(rtts, 0.99)
	start = time.Now()
	if err := parallel(cfg.Clients, cfg.Tasks, func(i int) error { return api.cancel(ctx, keys[i]) }); err != nil {
		return res, fmt.Errorf("cancels: %w", err)
	}
	res.CancelsPerSec = float64(cfg.Tasks) / time.Since(start).Seconds()

	// deliveries: all due at one instant, after every create is in (estimated from the creates'
	// rate, doubled, plus a second).
	at := time.Now().Add(time.Second + 2*time.Duration(float64(cfg.Tasks)/res.CreatesPerSec*float64(time.Second))).Truncate(time.Millisecond)
	dues := make(map[string]time.Time, cfg.Tasks)
	for i := range cfg.Tasks {
		dues[fmt.Sprintf("load-%s-burst-%d", run, i)] = at
	}
	if err := createAll(ctx, api, cfg.Clients, dues, callback); err != nil {
		return res, fmt.Errorf("deliveries: %w", err)
	}
	if time.Now().After(at) {
		return res, errors.New("deliveries: creating the tasks took past their due time; raise the margin")
	}
	arrived, err := rcv.await(ctx, dues, at.Add(cfg.Wait))
	if err != nil {
		return res, fmt.Errorf("deliveries: %w", err)
	}
	res.Early += early(dues, arrived)
	last := at
	for _, a := range arrived {
		if a.After(last) {
			last = a
		}
	}
	res.DeliveredPerSec = float64(cfg.Tasks) / last.Sub(at).Seconds()

	// lateness
	begin := time.Now().Add(2 * time.Second).Truncate(time.Millisecond)
	dues = make(map[string]time.Time, cfg.SpreadTasks)
	for i := range cfg.SpreadTasks {
		off := time.Duration(int64(cfg.Spread) * int64(i) / int64(cfg.SpreadTasks))
		dues[fmt.Sprintf("load-%s-spread-%d", run, i)] = begin.Add(off).Truncate(time.Millisecond)
	}
	if err := createAll(ctx, api, cfg.Clients, dues, callback); err != nil {
		return res, fmt.Errorf("lateness: %w", err)
	}
	arrived, err = rcv.await(ctx, dues, begin.Add(cfg.Spread+cfg.Wait))
	if err != nil {
		return res, fmt.Errorf("lateness: %w", err)
	}
	res.Early += early(dues, arrived)
	late := make([]time.Duration, 0, len(dues))
	for k, due := range dues {
		late = append(late, arrived[k].Sub(due))
	}
	slices.Sort(late)
	res.LatenessP50, res.LatenessP90 = measure.Quantile(late, 0.5), measure.Quantile(late, 0.9)
	res.LatenessP99, res.LatenessMax = measure.Quantile(late, 0.99), late[len(late)-1]
	res.Duplicates = rcv.duplicates()
	return res, nil
}

// createAll creates every task of dues (key → due time), cfg.Clients at a time.
func createAll(ctx context.Context, api *client, clients int, dues map[string]time.Time, callback string) error {
	keys := make([]string, 0, len(dues))
	for k := range dues {
		keys = append(keys, k)
	}
	return parallel(clients, len(keys), func(i int) error { return api.create(ctx, keys[i], dues[keys[i]], callback) })
}

// parallel runs f(0..n-1) on workers goroutines and returns the first error.
func parallel(workers, n int, f func(i int) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
				if err := f(i); err != nil {
					once.Do(func() { first = err })
					next.Store(int64(n)) // stop the others
					return
				}
			}
		}()
	}
	wg.Wait()
	return first
}

// client is the part of timerd's API the load test uses.
type client struct {
	base, token string
	http        *http.Client
}

type createRequest struct {
	Key      string   `json:"key"`
	DueAt    string   `json:"due_at"`
	Callback callback `json:"callback"`
}

type callback struct {
	URL    string `json:"url"`
	Method string `json:"method"`
	Body   string `json:"body"`
}

// create creates one task and insists on 201: a 200 (the key existed) would mean the test did
// not measure a create.
func (c *client) create(ctx context.Context, key string, due time.Time, cb string) error {
	body, _ := json.Marshal(createRequest{Key: key, DueAt: due.UTC().Format(time.RFC3339Nano),
		Callback: callback{URL: cb, Method: http.MethodPost, Body: key}})
	return c.do(ctx, http.MethodPost, "/v1/tasks", body, http.StatusCreated)
}

// cancel cancels one pending task and insists on 200.
func (c *client) cancel(ctx context.Context, key string) error {
	return c.do(ctx, http.MethodDelete, "/v1/tasks/"+url.PathEscape(key), nil, http.StatusOK)
}

func (c *client) do(ctx context.Context, method, path string, body []byte, want int) error {
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	if resp.StatusCode != want {
		return fmt.Errorf("%s %s: %s (want %d): %s", method, path, resp.Status, want, bytes.TrimSpace(msg))
	}
	return nil
}

// receiver records the first arrival of each task's callback, by its Idempotency-Key.
type receiver struct {
	mu      sync.Mutex
	first   map[string]time.Time
	dups    int
	pending map[string]struct{} // keys await still waits for
	done    chan struct{}       // closed when pending empties
}

func newReceiver() *receiver { return &receiver{first: map[string]time.Time{}} }

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	now := time.Now()
	key := req.Header.Get("Idempotency-Key")
	io.Copy(io.Discard, req.Body)
	r.mu.Lock()
	if _, ok := r.first[key]; ok {
		r.dups++
	} else {
		r.first[key] = now
		if _, ok := r.pending[key]; ok {
			delete(r.pending, key)
			if len(r.pending) == 0 {
				close(r.done)
			}
		}
	}
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

// await waits until every key of dues has arrived, or deadline passes, and returns their first
// arrivals.
func (r *receiver) await(ctx context.Context, dues map[string]time.Time, deadline time.Time) (map[string]time.Time, error) {
	r.mu.Lock()
	r.pending, r.done = make(map[string]struct{}), make(chan struct{})
	for k := range dues {
		if _, ok := r.first[k]; !ok {
			r.pending[k] = struct{}{}
		}
	}
	if len(r.pending) == 0 {
		close(r.done)
	}
	done := r.done
	r.mu.Unlock()
	timer := time.NewTimer(time.Until(deadline))
	defer timer.Stop()
	select {
	case <-done:
	case <-timer.C:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if n := len(r.pending); n > 0 {
		return nil, fmt.Errorf("%d of %d callbacks never arrived (waited until %s)", n, len(dues), deadline.Format(time.TimeOnly))
	}
	got := make(map[string]time.Time, len(dues))
	for k := range dues {
		got[k] = r.first[k]
	}
	return got, nil
}

// early counts the keys of dues that arrived before their due time.
func early(dues, arrived map[string]time.Time) int {
	n := 0
	for k, due := range dues {
		if arrived[k].Before(due) {
			n++
		}
	}
	return n
}

// duplicates returns the callbacks received more than once so far.
func (r *receiver) duplicates() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.dups
}
