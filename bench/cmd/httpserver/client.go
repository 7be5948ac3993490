package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/internal/measure"
)

// clientReport is the client role's one JSON line, read by the driver, which
// copies it into the server's results.HTTPServer. Responses, Skipped and
// Latency cover the measured window (after -warmup, by the client's clock);
// the rest, checks rather than rates, the whole run.
type clientReport struct {
	Responses    int64           `json:"responses"`
	Skipped      int64           `json:"skipped"`       // sends missed by a connection that fell behind
	Latency      measure.Summary `json:"latency"`       // of ordinary requests, send to last byte
	IdleUnclosed int64           `json:"idle_unclosed"` // idle connections the server left open for 2× idle
	Redials      int64           `json:"redials"`       // connections lost while not idle, or dials that failed
}

var (
	getHello = []byte("GET / HTTP/1.1\r\nHost: bench\r\n\r\n")
	getSlow  = []byte("GET /slow HTTP/1.1\r\nHost: bench\r\n\r\n")
)

type client struct {
	cfg                  config
	start, measured, end time.Time
	idleEvery            int // every idleEvery-th connection goes idle once; 0: none

	responses, skipped, idleUnclosed, redials atomic.Int64
	mu                                        sync.Mutex
	latencies                                 []time.Duration
}

// runClient loads the server at -addr for -warmup, then for -duration, the
// measured window, and prints its clientReport.
func runClient(c config) error {
	if len(c.conns) != 1 {
		return fmt.Errorf("a client takes one -conns, not %v", c.conns)
	}
	cl := &client{cfg: c, start: time.Now()}
	cl.measured = cl.start.Add(c.warmup)
	cl.end = cl.measured.Add(c.duration)
	if c.idleFrac > 0 {
		cl.idleEvery = max(1, int(1/c.idleFrac+0.5))
	}
	var wg sync.WaitGroup
	for i := range c.conns[0] {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cl.conn(i)
		}()
	}
	wg.Wait()
	return measure.Emit(os.Stdout, clientReport{
		Responses: cl.responses.Load(), Skipped: cl.skipped.Load(), Latency: measure.Summarize(cl.latencies, false),
		IdleUnclosed: cl.idleUnclosed.Load(), Redials: cl.redials.Load(),
	})
}

// conn is connection i's life: one request every interval from a random
// phase on, redialling when the connection is lost. A connection that falls
// behind skips the sends it missed rather than sending them in a burst.
func (cl *client) conn(i int) {
	c := cl.cfg
	r := connRand(i, c.seed)
	next := cl.start.Add(time.Duration(r.Int64N(int64(c.interval))))
	var idleAt time.Time // zero: this connection never goes idle
	// Early enough that the server's close, or the client's wait for it,
	// ends within the run.
	if latest := cl.end.Sub(cl.start) - 2*c.idle - c.interval; cl.idleEvery > 0 && i%cl.idleEvery == 0 && latest > 0 {
		idleAt = cl.start.Add(time.Duration(r.Int64N(int64(latest))))
	}
	var conn net.Conn
	var br *bufio.Reader
	var latencies []time.Duration
	defer func() {
		if conn != nil {
			conn.Close()
		}
		cl.mu.Lock()
		cl.latencies = append(cl.latencies, latencies...)
		cl.mu.Unlock()
	}()
	for ; next.Before(cl.end); next = next.Add(c.interval) {
		time.Sleep(time.Until(next))
		if conn == nil {
			var err error
			if conn, err = net.Dial("tcp", c.addr); err != nil {
				cl.redials.Add(1)
				continue
			}
			br = bufio.NewReader(conn)
		}
		if !idleAt.IsZero() && next.After(idleAt) {
			cl.waitIdle(conn, br)
			conn.Close()
			conn, idleAt, next = nil, time.Time{}, time.Now()
			continue
		}
		req := getHello
		slow := r.Float64() < c.slowFrac
		if slow {
			req = getSlow
		}
		sent := time.Now()
		if err := exchange(conn, br, req); err != nil {
			cl.redials.Add(1)
			conn.Close()
			conn = nil
			continue
		}
		now := time.Now()
		missed := int64(now.Sub(next) / c.interval)
		if sent.After(cl.measured) {
			cl.responses.Add(1)
			cl.skipped.Add(max(missed, 0))
			if !slow {
				latencies = append(latencies, now.Sub(sent))
			}
		}
		if missed > 0 {
			next = next.Add(time.Duration(missed) * c.interval)
		}
	}
}

// connRand is the randomness of connection i of a client with seed: its
// phase, its slow requests and when it goes idle.
func connRand(i int, seed uint64) *rand.Rand { return rand.New(rand.NewPCG(uint64(i), seed)) }

// waitIdle keeps conn silent until the server closes it, or for 2× idle.
func (cl *client) waitIdle(conn net.Conn, br *bufio.Reader) {
	conn.SetReadDeadline(time.Now().Add(2 * cl.cfg.idle))
	if _, err := br.ReadByte(); errors.Is(err, os.ErrDeadlineExceeded) {
		cl.idleUnclosed.Add(1)
	}
}

// exchange sends req and reads the response: the status line and headers,
// then Content-Length bytes of body, which the server always sets for a
// body this small.
func exchange(conn net.Conn, br *bufio.Reader, req []byte) error {
	if _, err := conn.Write(req); err != nil {
		return err
	}
	n := -1
	for {
		line, err := br.ReadSlice('\n')
		if err != nil {
			return err
		}
		if len(line) <= 2 { // the blank line after the headers
			break
		}
		if v, ok := bytes.CutPrefix(line, []byte("Content-Length: ")); ok {
			if n, err = strconv.Atoi(string(bytes.TrimSpace(v))); err != nil {
				return err
			}
		}
	}
	if n < 0 {
		return errors.New("response without Content-Length")
	}
	_, err := br.Discard(n)
	return err
}
