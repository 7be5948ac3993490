package main

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel"
	"github.com/go-timingwheel/timingwheel/bench/internal/lib"
	"github.com/go-timingwheel/timingwheel/bench/internal/measure"
	"github.com/go-timingwheel/timingwheel/bench/internal/results"
)

// server is the server role's state: the timers and the counters.
type server struct {
	cfg    config
	timers lib.Lib // nil for "none"

	requests                     atomic.Int64
	deadlineFires, deadlineEarly atomic.Int64
	idle                         idleCounts
}

// body is the whole response: the work is the serving, not the handler.
var body = []byte("hello, timers\n")

// serve listens on an ephemeral loopback port, prints its address as the
// first line on stdout and serves. The driver's line "start" on stdin opens
// the measured window, which the end of stdin closes; serve then prints its
// results.HTTPServer line and returns.
func serve(c config) error {
	s := &server{cfg: c}
	switch c.lib {
	case "none":
	case "wheel", "runtime":
		var err error
		if s.timers, err = lib.New(lib.Config{Name: c.lib, Tick: c.tick, Size: 512}); err != nil {
			return err
		}
		defer s.timers.Close()
	default:
		return fmt.Errorf("unknown -lib %q", c.lib)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	mux := http.NewServeMux()
	mux.Handle("/", s.withDeadline(c.deadline, s.hello))
	mux.Handle("/slow", s.withDeadline(c.slowDeadline, s.slow))
	srv := &http.Server{Handler: mux}
	go func() {
		// Serve returns only if the listener fails: no server left to measure.
		err := srv.Serve(&idleListener{Listener: ln, timers: s.timers, idle: c.idle, counts: &s.idle})
		fmt.Fprintln(os.Stderr, "httpserver server:", err)
		os.Exit(1)
	}()
	fmt.Println(ln.Addr())

	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() || in.Text() != "start" {
		return fmt.Errorf("stdin: want the line \"start\", got %q (%v)", in.Text(), in.Err())
	}
	begin := s.snapshot()
	if c.cpuProfile != "" {
		f, err := os.Create(c.cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
	}
	for in.Scan() { // nothing more is sent: wait for the end
	}
	pprof.StopCPUProfile() // a no-op without -cpuprofile
	// Measured before the exit closes the connections: the same moment
	// for every variant, after its client has gone.
	return measure.Emit(os.Stdout, s.result(begin, s.snapshot()))
}

// counts are the server's rates, read at both ends of the measured window.
type counts struct {
	cpu      time.Duration
	switches uint64 // the process's context switches
	requests int64
	wheel    timingwheel.Stats
}

func (s *server) snapshot() counts {
	c := counts{cpu: measure.CPU(), switches: measure.ReadSched().CtxSwitches, requests: s.requests.Load()}
	if w, ok := s.timers.(*lib.Wheel); ok {
		c.wheel = w.TW.Stats()
	}
	return c
}

func (s *server) hello(w http.ResponseWriter, r deadlined) {
	if r.ctx.Err() != nil {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	w.Write(body)
}

// slow outlives its deadline: it waits for the timer to cancel its context.
func (s *server) slow(w http.ResponseWriter, r deadlined) {
	if s.timers != nil {
		<-r.ctx.Done()
		elapsed := time.Since(r.armed)
		// A context cancelled because the connection went is no fire.
		if r.parent.Err() == nil {
			s.deadlineFires.Add(1)
			if elapsed < r.d {
				s.deadlineEarly.Add(1)
			}
		}
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	w.Write(body)
}

// result is the window's rates, the life's peak RSS and fire counts.
func (s *server) result(begin, end counts) results.HTTPServer {
	c := s.cfg
	res := results.HTTPServer{
		Workload: "httpserver", Lib: c.lib, GOMAXPROCS: runtime.GOMAXPROCS(0),
		IdleMs: measure.Ms(c.idle), DeadlineMs: measure.Ms(c.deadline), SlowDeadlineMs: measure.Ms(c.slowDeadline),
		CPUS:          (end.cpu - begin.cpu).Seconds(),
		CtxSwitches:   int64(end.switches - begin.switches),
		MaxRSSMiB:     float64(measure.MaxRSS()) / (1 << 20),
		Requests:      end.requests - begin.requests,
		Wakeups:       -1,
		Fired:         -1,
		Stopped:       -1,
		DeadlineFires: s.deadlineFires.Load(),
		DeadlineEarly: s.deadlineEarly.Load(),
		IdleFires:     s.idle.fires.Load(),
		IdleEarly:     s.idle.early.Load(),
	}
	if c.lib == "wheel" {
		b, e := begin.wheel, end.wheel
		res.TickMs = measure.Ms(c.tick)
		res.Wakeups, res.Fired, res.Stopped = int64(e.Wakeups-b.Wakeups), int64(e.Fired-b.Fired), int64(e.Stopped-b.Stopped)
	}
	return res
}
