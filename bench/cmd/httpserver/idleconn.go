package main

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/internal/lib"
)

// idleListener gives every connection it accepts an idle timer (none when
// timers is nil, for the no-timer server).
type idleListener struct {
	net.Listener
	timers lib.Lib
	idle   time.Duration
	counts *idleCounts
}

// idleCounts are the idle timers' fires, counted by their callbacks.
type idleCounts struct {
	fires, early atomic.Int64
}

func (l *idleListener) Accept() (net.Conn, error) {
	conn, err := l.Listener.Accept()
	if err != nil || l.timers == nil {
		return conn, err
	}
	c := &idleConn{Conn: conn, idle: l.idle, counts: l.counts}
	c.mu.Lock()
	c.armed = time.Now()
	c.timer = l.timers.AfterFunc(l.idle, c.expire)
	c.mu.Unlock()
	return c, nil
}

// idleConn is closed by its timer once no data has been read from it for
// idle: every Read that returns data resets the timer.
//
// mu protects the fields below it. It is taken once per Read that returns
// data, uncontended but for the rare fire, and makes the early check exact:
// a callback compares the time of its own arming with the time it runs.
type idleConn struct {
	net.Conn
	idle   time.Duration
	counts *idleCounts

	mu    sync.Mutex
	timer lib.Handle
	armed time.Time // just before the timer was last armed
	// stale counts fires of armings a later Reset replaced: Reset found
	// the timer expired, so the callback of the old arming is on its way,
	// and must neither close the connection (data came in time) nor be
	// checked against the new arming.
	stale  int
	closed bool // by the timer or by Close; no Reset after it
}

func (c *idleConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if !c.closed {
			c.armed = time.Now()
			if !c.timer.Reset(c.idle) {
				c.stale++
			}
		}
		c.mu.Unlock()
	}
	return n, err
}

// expire is the timer's callback.
func (c *idleConn) expire() {
	c.mu.Lock()
	if c.stale > 0 {
		c.stale--
		c.mu.Unlock()
		return
	}
	if c.closed {
		c.mu.Unlock()
		return
	}
	c.closed = true
	early := time.Since(c.armed) < c.idle
	c.mu.Unlock()
	c.counts.fires.Add(1)
	if early {
		c.counts.early.Add(1)
	}
	// The server's read then fails, and it calls Close.
	c.Conn.Close()
}

func (c *idleConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.timer.Stop()
	c.mu.Unlock()
	return c.Conn.Close()
}
