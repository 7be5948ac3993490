package rediswheel

import (
	"context"
	"io"
	"net"
	"os"
	"os/exec"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// throwawayRedis starts a redis-server of the test's own, with args, on a
// free loopback port, and kills it when t ends: the shared servers'
// configuration is never changed. It skips without redis-server on PATH,
// unless REDISWHEEL_REQUIRE=1.
func throwawayRedis(t *testing.T, args ...string) string {
	t.Helper()
	path, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("REDISWHEEL_REQUIRE") == "1" {
			t.Fatalf("redis-server is not on PATH and REDISWHEEL_REQUIRE=1")
		}
		t.Skip("redis-server is not on PATH")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	_, port, _ := net.SplitHostPort(addr)
	base := []string{"--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", t.TempDir()}
	cmd := exec.Command(path, append(base, args...)...)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	eventually(t, patience, "redis-server to listen on "+addr, func() bool {
		conn, err := net.Dial("tcp", addr)
		if err == nil {
			conn.Close()
		}
		return err == nil
	})
	return addr
}

// notRedis listens on loopback and answers anything with an HTTP error, as a
// web server at a mistyped address would.
func notRedis(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		conns []net.Conn
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, conn)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				io.WriteString(conn, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
				io.Copy(io.Discard, conn)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// runUntilError runs a worker through c and returns its error, failing the
// test if Run keeps retrying: then it would return nil when its context ends.
func runUntilError(t *testing.T, c redis.UniversalClient) error {
	t.Helper()
	var reported []error
	var mu sync.Mutex
	q, err := newTQ(c, Options{Namespace: uniqueNamespace(t), OnError: func(err error) {
		mu.Lock()
		reported = append(reported, err)
		mu.Unlock()
	}})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err = q.Run(ctx, func(context.Context, Task) error { return nil })
	require.Error(t, err, "Run retried until its context ended; reported: %v", reported)
	require.NoError(t, ctx.Err(), "Run returned only when its context ended")
	assert.ErrorIs(t, err, ErrUnrecoverable)
	t.Log(err)
	return err
}

// Run returns at once, with an error, on failures that retrying will not
// heal; with the right credentials the same server works.
func TestRunReturnsUnrecoverableErrors(t *testing.T) {
	const password = "s3cret"
	secured := throwawayRedis(t, "--requirepass", password)
	client := func(addr string, o redis.Options) *redis.Client {
		o.Addr = addr
		c := redis.NewClient(&o)
		t.Cleanup(func() { c.Close() })
		return c
	}
	admin := client(secured, redis.Options{Password: password})
	require.NoError(t, admin.Do(context.Background(), "ACL", "SETUSER", "noscripts", "on", ">pw", "~*", "&*", "+@all", "-@scripting").Err())

	t.Run("no password", func(t *testing.T) {
		err := runUntilError(t, client(secured, redis.Options{}))
		// Redis 7 answers a long unauthenticated command with "ERR Protocol
		// error: unauthenticated multibulk length", a short one with NOAUTH.
		assert.True(t, redis.IsAuthError(err), "%v", err)
	})
	t.Run("wrong password", func(t *testing.T) {
		err := runUntilError(t, client(secured, redis.Options{Password: "wrong"}))
		assert.True(t, redis.IsAuthError(err), "%v", err)
		assert.ErrorContains(t, err, "WRONGPASS")
	})
	t.Run("scripts denied", func(t *testing.T) {
		err := runUntilError(t, client(secured, redis.Options{Username: "noscripts", Password: "pw"}))
		assert.True(t, redis.IsPermissionError(err), "%v", err)
	})
	t.Run("scripting renamed away", func(t *testing.T) {
		addr := throwawayRedis(t, "--rename-command", "EVALSHA", "", "--rename-command", "EVAL", "")
		err := runUntilError(t, client(addr, redis.Options{}))
		assert.ErrorContains(t, err, "unknown command")
	})
	t.Run("not Redis", func(t *testing.T) {
		err := runUntilError(t, client(notRedis(t), redis.Options{}))
		assert.ErrorContains(t, err, "redis: ")
	})
	t.Run("right password", func(t *testing.T) {
		q := newQueue(t, client(secured, redis.Options{Password: password}), Options{})
		_, err := q.Add(context.Background(), "k", nil, time.Now())
		require.NoError(t, err)
		var rec recorder
		stop := run(t, q, rec.handle) // run fails the test if Run returns an error
		eventually(t, patience, "the task", func() bool { return rec.count() == 1 && leftovers(t, q) == 0 })
		stop()
	})
}

// unrecoverable tells transient failures from permanent ones by the client's
// error alone.
func TestUnrecoverable(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{redisError("NOAUTH Authentication required."), true},
		{redisError("WRONGPASS invalid username-password pair or user is disabled."), true},
		{redisError("NOPERM User x has no permissions to run the 'evalsha' command"), true},
		{redisError("ERR unknown command 'EVALSHA', with args beginning with: "), true},
		{redisError("LOADING Redis is loading the dataset in memory"), false},
		{redisError("CLUSTERDOWN The cluster is down"), false},
		{redisError("MOVED 3999 127.0.0.1:6381"), false},
		{redisError("READONLY You can't write against a read only replica."), false},
		{redisError("BUSY Redis is busy running a script."), false},
		{context.DeadlineExceeded, false},
		{io.EOF, false},
		{&net.OpError{Op: "dial", Net: "tcp", Err: os.ErrDeadlineExceeded}, false},
	} {
		assert.Equal(t, tc.want, unrecoverable(tc.err), "%v", tc.err)
	}
}

// redisError stands for an error reply: go-redis's own type is internal.
type redisError string

func (e redisError) Error() string { return string(e) }
func (redisError) RedisError()     {}
