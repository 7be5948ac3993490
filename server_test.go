package timingwheel_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestIdleTimeoutRecipeKeepsSlowRequests holds the recipe of
// Example_idleTimeoutListener on a real net/http server with a 1 s idle
// timeout: requests whose handler takes 1.5 s complete, on new and on reused
// keep-alive connections, and a connection that stays idle is still closed,
// never before the idle timeout. A timer pushed back only by reads cut
// every such request (EOF).
func TestIdleTimeoutRecipeKeepsSlowRequests(t *testing.T) {
	tw, err := timingwheel.New(time.Millisecond, 512)
	require.NoError(t, err)
	defer tw.Stop() // last: after the server and the clients have closed
	const idle = time.Second
	const work = 1500 * time.Millisecond
	srv, ln, err := newIdleServer(tw, idle, workHandler)
	require.NoError(t, err)
	defer srv.Close()
	url := fmt.Sprintf("http://%s/work?ms=%d", ln.Addr(), work.Milliseconds())

	t.Run("slow requests complete", func(t *testing.T) {
		tr := &http.Transport{}
		defer tr.CloseIdleConnections()
		client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
		for round := range 2 { // the second round reuses the first's connections
			var wg sync.WaitGroup
			for i := range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					resp, err := client.Get(url)
					if !assert.NoError(t, err, "round %d request %d", round, i) {
						return
					}
					defer resp.Body.Close()
					body, err := io.ReadAll(resp.Body)
					assert.NoError(t, err, "round %d request %d: body", round, i)
					assert.Equal(t, http.StatusOK, resp.StatusCode)
					assert.Equal(t, "worked 1500ms\n", string(body), "round %d request %d", round, i)
				}()
			}
			wg.Wait()
		}
	})

	t.Run("a slow request on a connection then idle", func(t *testing.T) {
		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(60*time.Second)))
		r := bufio.NewReader(conn)
		sent := time.Now()
		_, err = fmt.Fprintf(conn, "GET /work?ms=%d HTTP/1.1\r\nHost: test\r\n\r\n", work.Milliseconds())
		require.NoError(t, err)
		resp, err := http.ReadResponse(r, nil)
		require.NoError(t, err, "the request was cut")
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		require.NoError(t, resp.Body.Close())
		require.Equal(t, "worked 1500ms\n", string(body))
		_, err = r.ReadByte()
		closed := time.Since(sent)
		require.ErrorIs(t, err, io.EOF, "the idle connection was not closed by the server within 60s")
		require.GreaterOrEqual(t, closed, work+idle, "closed before the handler's work plus the idle timeout")
	})

	t.Run("a connection that never sends", func(t *testing.T) {
		dialed := time.Now()
		conn, err := net.Dial("tcp", ln.Addr().String())
		require.NoError(t, err)
		defer conn.Close()
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(60*time.Second)))
		_, err = conn.Read(make([]byte, 1))
		closed := time.Since(dialed)
		require.ErrorIs(t, err, io.EOF, "the idle connection was not closed by the server within 60s")
		require.GreaterOrEqual(t, closed, idle, "closed before the idle timeout")
	})
}

// TestShutdownThenStop holds the order the README and Stop's doc give a
// server: srv.Shutdown first, while the wheel still runs, so that a request
// waiting for its wheel deadline gets it (504) and Shutdown returns without
// waiting out its own context; then tw.Stop. It also pins why: on a stopped
// wheel a pending request context is not done by its deadline (see
// TestStoppedWheelLeavesContextsPending).
func TestShutdownThenStop(t *testing.T) {
	tw, err := timingwheel.New(time.Millisecond, 512)
	require.NoError(t, err)
	stopped := false
	defer func() {
		if !stopped {
			tw.Stop()
		}
	}()
	inHandler := make(chan struct{}, 1)
	waitForDeadline := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inHandler <- struct{}{}
		<-r.Context().Done()
		http.Error(w, r.Context().Err().Error(), http.StatusGatewayTimeout)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &http.Server{Handler: withDeadline(tw, 200*time.Millisecond, waitForDeadline)}
	go srv.Serve(ln)
	defer srv.Close()

	client := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	status := make(chan int, 1)
	go func() {
		resp, err := client.Get("http://" + ln.Addr().String())
		if err != nil {
			status <- 0
			return
		}
		resp.Body.Close()
		status <- resp.StatusCode
	}()
	select {
	case <-inHandler:
	case <-time.After(30 * time.Second):
		t.Fatal("the request did not reach its handler within 30s")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.Shutdown(ctx), "Shutdown with the wheel running: the request's deadline ends it")
	select {
	case code := <-status:
		require.Equal(t, http.StatusGatewayTimeout, code)
	case <-time.After(30 * time.Second):
		t.Fatal("no response within 30s")
	}
	tw.Stop()
	stopped = true
}

// TestStoppedWheelLeavesContextsPending pins what Stop's doc says of
// contexts pending at Stop: their deadline never ends them, after Stop as
// the clock passes it, and their cancel still does.
func TestStoppedWheelLeavesContextsPending(t *testing.T) {
	clock := timingwheel.NewFakeClock(time.Unix(0, 0))
	tw, err := timingwheel.New(time.Millisecond, 64, timingwheel.WithClock(clock))
	require.NoError(t, err)
	ctx, cancel := tw.WithTimeout(context.Background(), 10*time.Millisecond)
	tw.Stop()
	clock.Advance(time.Hour)
	require.NoError(t, ctx.Err(), "a context pending at Stop expired")
	cancel()
	require.ErrorIs(t, ctx.Err(), context.Canceled)
}
