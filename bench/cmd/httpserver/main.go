// Command httpserver runs a real net/http server on loopback under
// keep-alive load and measures what its timers cost, armed the way a Go
// server arms them:
//
//   - an idle timeout per connection: the listener gives each accepted
//     connection a timer that closes it, Reset on every read that returns
//     data (idleconn.go);
//   - a deadline per request: a middleware gives each request a context
//     that a timer cancels, and stops the timer when the handler returns
//     (deadline.go). The handler writes a short body, or a 503 if the
//     context is done.
//
// -lib selects the timers: "wheel" (timingwheel.New(-tick, 512), AfterFunc,
// and context.WithCancel cancelled by a wheel timer), "runtime"
// (time.AfterFunc and context.WithTimeout) or "none" (the same server with
// no timer at all, its contexts made by context.WithCancel: the cost of
// serving alone).
//
// Three roles, one binary. The default role, run, is the driver: it sweeps
// every -deadline × -conns point, the whole sweep once per round, and at
// each point starts one server process per library and one client process
// per server, all at the same time, so that every server sees the same
// machine load (the order they start in turns by one library each round); after -warmup it opens the servers' measured
// window, waits for the clients to finish -duration later, closes the
// window and prints one JSON line per server (results.HTTPServer). The
// no-timer server runs beside the other two rather than after them: alone,
// on a machine less loaded, its CPU time would not be comparable (an idle
// core makes the Go scheduler spin, and that is counted). Every child is
// killed by pid and reaped when its round ends, also if the driver fails or
// is interrupted.
//
// The server (-role server) measures its own CPU time (user+sys, getrusage)
// and its requests over the window, and its peak RSS (ru_maxrss) and the
// early checks over its life. The client (-role client) opens -conns
// keep-alive HTTP/1.1 connections over raw net.Conns (cheaper than
// net/http's client, and the same for every server) and sends a GET on
// each every -interval from a random phase, so that the load is steady.
//
// Two checks that no timer fires early run throughout:
//
//   - -slow-frac of requests (1%) ask for /slow, whose handler waits for its
//     context with a -slow-deadline of 30 ms; the server counts the
//     deadlines that cancelled it and those seen before the deadline had
//     elapsed since the context was made (by the monotonic clock, when the
//     handler wakes: a fire early by less than the wake-up delay would go
//     unseen; bench/cmd/accuracy checks that finer). The "none" server has
//     no timer to wait for and answers /slow at once.
//   - -idle-frac of connections (1%) fall silent once, at a random moment,
//     until the server closes them (or, for "none", for twice -idle); the
//     idle timer's callback checks that -idle has passed since the read
//     that last reset it, exactly; then the client reconnects.
package main

import (
	"flag"
	"fmt"
	"os"
	"syscall"
	"time"
)

// config is every flag; the driver passes the relevant ones to its children.
type config struct {
	role string

	// The driver's.
	conns     []int
	deadlines []time.Duration
	libs      []string
	rounds    int

	// The server's.
	lib          string
	tick         time.Duration
	idle         time.Duration
	deadline     time.Duration
	slowDeadline time.Duration
	// cpuProfile: the driver's directory for the servers' CPU profiles of
	// the measured window, one file per library, deadline, connections and
	// round; the server's file.
	cpuProfile string

	// The client's (conns too: the driver's are a list, a client's one value).
	addr     string
	warmup   time.Duration
	duration time.Duration
	interval time.Duration
	slowFrac float64
	idleFrac float64
	seed     uint64
}

func main() {
	var c config
	var conns, deadlines, libs string
	flag.StringVar(&c.role, "role", "run", "run (start servers and clients, print results), server or client")
	// Light to heavy: at 3000 connections three servers and their clients
	// keep 2 cores 70–75% busy (see -interval). 10000 does not fit on 2
	// cores: at 200 ms (-duration 5s, -rounds 1) the clients missed 31–44%
	// of their sends, p99 latency was 1.3–2.1 s and the idle timeout closed
	// up to 1235 busy connections a server.
	flag.StringVar(&conns, "conns", "30,300,3000", "connections per server: a list for run, one number for client")
	flag.StringVar(&libs, "libs", "wheel,runtime,none", "servers to run side by side (run)")
	flag.IntVar(&c.rounds, "rounds", 3, "rounds (run)")
	flag.StringVar(&c.lib, "lib", "wheel", "timers: wheel, runtime or none (server)")
	flag.DurationVar(&c.tick, "tick", time.Millisecond, "the wheel's tick (server)")
	// Twice the request interval, so that a connection that is not idle
	// never nears it even when its client runs late (on 2 cores otherwise
	// idle, no connection was lost), and short enough for the idle check to
	// fit in a 7 s run. Any timeout from 512 ms to 262 s sits on the same
	// level of a 1 ms × 512 wheel, so 2 s costs the wheel what a server's
	// minutes do.
	flag.DurationVar(&c.idle, "idle", 2*time.Second, "idle timeout per connection (server, client)")
	// Request timeouts as RPC and HTTP servers set them, from 50 ms to 10 s:
	// every ordinary request stops its timer long before. They land on
	// different levels of a 1 ms × 512 wheel (50 and 200 ms on the first,
	// one bucket per tick; 1 and 10 s on the second), which is what decides
	// how many buckets a stopped timer leaves behind.
	flag.StringVar(&deadlines, "deadline", "50ms,200ms,1s,10s", "deadline of an ordinary request: a list for run, one value for server")
	// 30 ticks of a 1 ms wheel, on its first level, and well within a
	// request interval, so a slow request never delays the next.
	flag.DurationVar(&c.slowDeadline, "slow-deadline", 30*time.Millisecond, "deadline of a /slow request, which waits for it (server)")
	flag.StringVar(&c.addr, "addr", "", "server address (client)")
	// Two seconds cover the ramp, 100% CPU (vmstat) while the connections
	// open over the first interval and the servers' heaps grow to size.
	flag.DurationVar(&c.warmup, "warmup", 2*time.Second, "load before the measured window (run, client)")
	flag.DurationVar(&c.duration, "duration", 10*time.Second, "the measured window (run, client)")
	// At 1 s, three servers of 3000 connections and their clients keep 2
	// cores otherwise idle 70–75% busy (vmstat), client p99 latency near
	// 16 ms and no send missed; at 500 ms they are 85–90% busy and the
	// clients fall behind. 300 connections are then a light load.
	flag.DurationVar(&c.interval, "interval", time.Second, "time between requests on one connection (client)")
	// 1% of requests and of connections: a few hundred deadline fires and
	// thirty idle closes at 3000 connections, too few to change the load.
	flag.Float64Var(&c.slowFrac, "slow-frac", 0.01, "fraction of requests that outlive their deadline (client)")
	flag.Float64Var(&c.idleFrac, "idle-frac", 0.01, "fraction of connections that go idle once (client)")
	// Each client of a point gets its own seed from the driver: with one
	// seed for all, connection i of every client had the same phase, so
	// the servers' requests arrived in lockstep, the first-started
	// server's a few milliseconds ahead, and at light load the server
	// whose request woke the machine paid for waking it: two runtime
	// servers read 1.14× CPU and 1.02× context switches, first ÷ second
	// (medians of 8 rounds at 1 s deadlines and 30 connections).
	flag.Uint64Var(&c.seed, "seed", 1, "seed of the connections' phases, slow requests and idle times (client)")
	flag.StringVar(&c.cpuProfile, "cpuprofile", "", "run: a directory for each server's CPU profile of the measured window; server: the file")
	flag.Parse()

	var err error
	if c.conns, err = parseInts(conns); err == nil {
		c.deadlines, err = parseDurations(deadlines)
	}
	if err == nil {
		c.libs = splitList(libs)
		err = raiseFileLimit()
	}
	if err == nil && c.role == "server" {
		if len(c.deadlines) != 1 {
			err = fmt.Errorf("a server takes one -deadline, not %v", c.deadlines)
		} else {
			c.deadline = c.deadlines[0]
		}
	}
	if err == nil {
		switch c.role {
		case "run":
			err = drive(c)
		case "server":
			err = serve(c)
		case "client":
			err = runClient(c)
		default:
			err = fmt.Errorf("unknown role %q", c.role)
		}
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "httpserver %s: %v\n", c.role, err)
		os.Exit(1)
	}
}

// raiseFileLimit lifts the soft limit on open files to the hard one: a
// server or client holds one descriptor per connection.
func raiseFileLimit() error {
	var l syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l); err != nil {
		return err
	}
	l.Cur = l.Max
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
}
