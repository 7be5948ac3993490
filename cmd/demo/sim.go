package main

import (
	"container/heap"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel"
)

// config is one simulated server load; both phases run the same one.
type config struct {
	Conns    int           // connections, each with an idle timeout
	Duration time.Duration // how long requests arrive, per phase
	Rate     float64       // requests per second, over all connections
	Idle     time.Duration // idle timeout, re-armed on every bit of activity
	Deadline time.Duration // per-request deadline
	P50, P75 time.Duration // log-normal request latency
	Shards   int           // goroutines driving the load
	Tick     time.Duration // wheel tick
	Size     int           // wheel size
	Seed     uint64
	// Live rewrites one progress line in place (\r) twice a second, for a
	// terminal; otherwise a plain line is printed every few seconds, so
	// that a pipe or a CI log gets lines, not one line thousands of
	// characters long. Progress, if positive, replaces either interval.
	Live     bool
	Progress time.Duration
}

// progressEvery returns how often the progress line is printed.
func (c config) progressEvery() time.Duration {
	switch {
	case c.Progress > 0:
		return c.Progress
	case c.Live:
		return 500 * time.Millisecond
	default:
		return 5 * time.Second
	}
}

// handle is what both timer kinds offer: *time.Timer and *timingwheel.Timer.
type handle interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// backend arms timers for one phase.
type backend struct {
	name      string
	afterFunc func(d time.Duration, f func()) handle
	close     func()
}

func runtimeBackend() backend {
	return backend{
		name:      "time.AfterFunc",
		afterFunc: func(d time.Duration, f func()) handle { return time.AfterFunc(d, f) },
		close:     func() {},
	}
}

func wheelBackend(tick time.Duration, size int) (backend, error) {
	tw, err := timingwheel.New(tick, size)
	if err != nil {
		return backend{}, err
	}
	return backend{
		name:      "timingwheel",
		afterFunc: func(d time.Duration, f func()) handle { return tw.AfterFunc(d, f) },
		close:     tw.Stop,
	}, nil
}

// result is what one phase measured.
type result struct {
	Name        string
	Elapsed     time.Duration
	CPU         time.Duration // user + system, whole process (getrusage)
	CPUOK       bool          // false where getrusage is missing
	PeakHeap    uint64        // largest heap-objects reading, sampled every 100 ms
	GCCycles    uint32
	GCPause     time.Duration
	Requests    int64
	Completed   int64 // stopped before their deadline
	TimedOut    int64 // deadline fired
	Resets      int64 // idle timeouts re-armed
	IdleFires   int64 // idle timeouts fired
	Fires       int64 // all timer callbacks
	Early       int64 // callbacks that started before their duration had elapsed
	MaxEarly    time.Duration
	LateP50     time.Duration
	LateP99     time.Duration
	LateMax     time.Duration
	MaxPending  int64
	StaleResets int64 // Resets that found their timer already fired
}

// conn is a connection's idle timeout.
//
// mu orders the driver's re-arming against the timer's callback: the driver
// holds it to record the arm time and Reset; the callback holds it to learn
// which arming it is firing for. When Reset reports that the timer had
// already fired but its callback has not yet taken mu, the superseded arm
// time is queued in stale and that callback measures against it, so a late
// callback is never mistaken for an early one.
type conn struct {
	mu      sync.Mutex
	timer   handle
	armedAt time.Time
	open    bool // false once the idle timeout fired, until the next activity
	stale   []time.Time
}

// request is one request with its deadline timer.
type request struct {
	armedAt time.Time
	timer   handle
	conn    *conn
	done    time.Duration // completion time, as an offset from the phase start
}

type byDone []*request

func (h byDone) Len() int           { return len(h) }
func (h byDone) Less(i, j int) bool { return h[i].done < h[j].done }
func (h byDone) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *byDone) Push(x any)        { *h = append(*h, x.(*request)) }
func (h *byDone) Pop() any {
	old := *h
	r := old[len(old)-1]
	*h = old[:len(old)-1]
	return r
}

// phase is the state of one run.
type phase struct {
	cfg  config
	be   backend
	late histogram

	early, maxEarly atomic.Int64
	fires           atomic.Int64
	idleFires       atomic.Int64
	timedOut        atomic.Int64
	openConns       atomic.Int64
	requests        atomic.Int64
	completed       atomic.Int64
	resets          atomic.Int64
	staleResets     atomic.Int64
}

// fired records a callback that started at now for a timer armed at armed
// for d.
func (p *phase) fired(now, armed time.Time, d time.Duration) {
	p.fires.Add(1)
	elapsed := now.Sub(armed) // monotonic: both readings come from time.Now
	if elapsed < d {
		p.early.Add(1)
		for {
			m := p.maxEarly.Load()
			if int64(d-elapsed) <= m || p.maxEarly.CompareAndSwap(m, int64(d-elapsed)) {
				break
			}
		}
		return
	}
	p.late.add(elapsed - d)
}

func (p *phase) onIdle(c *conn) {
	now := time.Now()
	c.mu.Lock()
	armed := c.armedAt
	if len(c.stale) > 0 {
		armed = c.stale[0]
		c.stale = c.stale[1:]
	} else {
		c.open = false
		p.openConns.Add(-1)
	}
	c.mu.Unlock()
	p.idleFires.Add(1)
	p.fired(now, armed, p.cfg.Idle)
}

// touch is activity on c: re-arm its idle timeout.
func (p *phase) touch(c *conn) {
	c.mu.Lock()
	prev := c.armedAt
	c.armedAt = time.Now()
	if !c.timer.Reset(p.cfg.Idle) {
		if c.open {
			c.stale = append(c.stale, prev)
			p.staleResets.Add(1)
		} else {
			c.open = true
			p.openConns.Add(1)
		}
	}
	c.mu.Unlock()
	p.resets.Add(1)
}

func (p *phase) pending() int64 {
	return p.openConns.Load() + p.requests.Load() - p.completed.Load() - p.timedOut.Load()
}

// run drives one phase and reports on it to w as it goes.
func run(cfg config, be backend, w io.Writer) result {
	p := &phase{cfg: cfg, be: be}
	conns := make([]*conn, cfg.Conns)
	for i := range conns {
		c := &conn{open: true, armedAt: time.Now()}
		conns[i] = c
		c.timer = be.afterFunc(cfg.Idle, func() { p.onIdle(c) })
	}
	p.openConns.Store(int64(len(conns)))
	runtime.GC()

	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gc0 := ms
	cpu0, cpuOK := cpuTime()
	start := time.Now()

	var wg sync.WaitGroup
	shards := max(cfg.Shards, 1)
	for s := range shards {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.drive(start, conns, s, shards)
		}()
	}
	doneDriving := make(chan struct{})
	go func() { wg.Wait(); close(doneDriving) }()
	peakHeap, maxPending := p.watch(start, doneDriving, w)

	// Every request has completed or timed out; let the last callbacks run.
	for p.completed.Load()+p.timedOut.Load() < p.requests.Load() && time.Since(start) < cfg.Duration+cfg.Deadline+5*time.Second {
		time.Sleep(time.Millisecond)
	}
	elapsed := time.Since(start)
	cpu1, _ := cpuTime()
	runtime.ReadMemStats(&ms)

	for _, c := range conns {
		c.timer.Stop()
	}
	be.close()
	if cfg.Live {
		fmt.Fprintln(w) // ends the line rewritten in place
	}

	return result{
		Name:        be.name,
		Elapsed:     elapsed,
		CPU:         cpu1 - cpu0,
		CPUOK:       cpuOK,
		PeakHeap:    peakHeap,
		GCCycles:    ms.NumGC - gc0.NumGC,
		GCPause:     time.Duration(ms.PauseTotalNs - gc0.PauseTotalNs),
		Requests:    p.requests.Load(),
		Completed:   p.completed.Load(),
		TimedOut:    p.timedOut.Load(),
		Resets:      p.resets.Load(),
		IdleFires:   p.idleFires.Load(),
		Fires:       p.fires.Load(),
		Early:       p.early.Load(),
		MaxEarly:    time.Duration(p.maxEarly.Load()),
		LateP50:     p.late.quantile(0.50),
		LateP99:     p.late.quantile(0.99),
		LateMax:     p.late.maximum(),
		MaxPending:  maxPending,
		StaleResets: p.staleResets.Load(),
	}
}

// drive generates shard s's share of the load: Poisson arrivals on the
// connections it owns (conns[s], conns[s+shards], …), each a request with a
// deadline and a log-normal latency. Arrival and completion are activity on
// the connection. It sleeps between events, at least a millisecond at a
// time so its own sleeps stay a small, equal cost in both phases.
func (p *phase) drive(start time.Time, conns []*conn, s, shards int) {
	cfg := p.cfg
	r := rand.New(rand.NewPCG(cfg.Seed, uint64(s)))
	mu := math.Log(float64(cfg.P50))
	sigma := (math.Log(float64(cfg.P75)) - mu) / 0.6745 // z of the 75th percentile
	rate := cfg.Rate / float64(shards)
	owned := (len(conns) - s + shards - 1) / shards
	if owned == 0 || rate <= 0 {
		return
	}
	var inFlight byDone
	next := time.Duration(r.ExpFloat64() / rate * float64(time.Second))
	for {
		now := time.Since(start)
		for next <= now && next < cfg.Duration {
			c := conns[s+shards*r.IntN(owned)]
			p.touch(c)
			// Latencies far past the deadline behave alike (the deadline
			// fires, Stop then fails); capping them bounds the drain.
			req := &request{conn: c, done: now + min(time.Duration(math.Exp(mu+sigma*r.NormFloat64())), 2*cfg.Deadline)}
			req.armedAt = time.Now()
			req.timer = p.be.afterFunc(cfg.Deadline, func() {
				p.fired(time.Now(), req.armedAt, cfg.Deadline)
				p.timedOut.Add(1)
			})
			p.requests.Add(1)
			heap.Push(&inFlight, req)
			next += time.Duration(r.ExpFloat64() / rate * float64(time.Second))
		}
		for len(inFlight) > 0 && inFlight[0].done <= now {
			req := heap.Pop(&inFlight).(*request)
			if req.timer.Stop() {
				p.completed.Add(1)
			}
			p.touch(req.conn)
		}
		wake := time.Duration(math.MaxInt64)
		if next < cfg.Duration {
			wake = next
		}
		if len(inFlight) > 0 {
			wake = min(wake, inFlight[0].done)
		}
		if wake == math.MaxInt64 {
			return
		}
		if wait := wake - time.Since(start); wait > 0 {
			time.Sleep(max(wait, time.Millisecond))
		}
	}
}

// watch prints the progress line (see config.Live) until done is closed and returns the
// peak heap and the most timers seen pending.
func (p *phase) watch(start time.Time, done <-chan struct{}, w io.Writer) (peakHeap uint64, maxPending int64) {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	lastPrint, lastResets, lastFires := start, int64(0), int64(0)
	every := p.cfg.progressEvery()
	for {
		select {
		case <-done:
			return peakHeap, maxPending
		case now := <-t.C:
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 {
				peakHeap = max(peakHeap, sample[0].Value.Uint64())
			}
			pending := p.pending()
			maxPending = max(maxPending, pending)
			if dt := now.Sub(lastPrint).Seconds(); dt >= every.Seconds() {
				resets, fires := p.resets.Load(), p.fires.Load()
				prefix, suffix := "\r", " "
				if !p.cfg.Live {
					prefix, suffix = "", "\n"
				}
				fmt.Fprintf(w, "%s  %-15s %5.1fs / %v   pending %9d   resets/s %9.0f   fires/s %8.0f   early %d%s",
					prefix, p.be.name, now.Sub(start).Seconds(), p.cfg.Duration, pending,
					float64(resets-lastResets)/dt, float64(fires-lastFires)/dt, p.early.Load(), suffix)
				lastPrint, lastResets, lastFires = now, resets, fires
			}
		}
	}
}
