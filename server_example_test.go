package timingwheel_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/go-timingwheel/timingwheel"
)

// idleListener closes every connection it accepts once it has been idle for
// idle: each Read that returns data pushes the connection's wheel timer
// back. One wheel serves every connection; Reset to a later deadline touches
// no bucket, so a busy connection costs a clock read and a lock per read.
type idleListener struct {
	net.Listener
	tw   *timingwheel.TimingWheel
	idle time.Duration
}

func (l idleListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ic := &idleConn{Conn: c, idle: l.idle}
	ic.timer = l.tw.AfterFunc(l.idle, func() { c.Close() })
	return ic, nil
}

type idleConn struct {
	net.Conn
	timer *timingwheel.Timer
	idle  time.Duration
}

func (c *idleConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.timer.Reset(c.idle)
	}
	return n, err
}

func (c *idleConn) Close() error {
	c.timer.Stop()
	return c.Conn.Close()
}

// An idle timeout per connection, on a wheel: the listener wraps each
// connection so that every read resets its timer, and the timer closes a
// connection that stays silent.
func Example_idleTimeoutListener() {
	tw, err := timingwheel.New(time.Millisecond, 512)
	if err != nil {
		panic(err)
	}
	defer tw.Stop()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	ln = idleListener{Listener: ln, tw: tw, idle: 300 * time.Millisecond}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(c, c) // echo until the connection is closed
		}
	}()

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		panic(err)
	}
	defer conn.Close()
	// Bounds every wait below; the timeout would print false, not hang.
	conn.SetDeadline(time.Now().Add(time.Minute))
	buf := make([]byte, 4)
	for range 3 { // active: each read on the server pushes the timeout back
		time.Sleep(10 * time.Millisecond)
		conn.Write([]byte("ping"))
		io.ReadFull(conn, buf)
	}
	fmt.Println("still open while it talks:", string(buf))
	start := time.Now()
	_, err = conn.Read(buf) // silent: the server closes it, 300 ms after its last read
	fmt.Println("closed after the idle timeout:", err == io.EOF, time.Since(start) >= 200*time.Millisecond)
	// Output:
	// still open while it talks: ping
	// closed after the idle timeout: true true
}

// withDeadline gives every request a deadline on the wheel: the handler's
// context is done, with context.DeadlineExceeded, once d has elapsed.
func withDeadline(tw *timingwheel.TimingWheel, d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := tw.WithTimeout(r.Context(), d)
		defer cancel() // the common case: the handler finished in time; frees the timer
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// A net/http middleware that gives each request a deadline on the wheel, as
// http.TimeoutHandler or context.WithTimeout would with a runtime timer.
func Example_requestDeadlineMiddleware() {
	tw, err := timingwheel.New(time.Millisecond, 512)
	if err != nil {
		panic(err)
	}
	defer tw.Stop()
	slow := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Minute): // work that takes too long
			fmt.Fprintln(w, "done")
		case <-r.Context().Done():
			http.Error(w, r.Context().Err().Error(), http.StatusGatewayTimeout)
		}
	})
	srv := httptest.NewServer(withDeadline(tw, 30*time.Millisecond, slow))
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	if err != nil {
		panic(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	fmt.Print(resp.StatusCode, " ", string(body))
	fmt.Println(context.DeadlineExceeded.Error() == string(body[:len(body)-1]))
	// Output:
	// 504 context deadline exceeded
	// true
}
