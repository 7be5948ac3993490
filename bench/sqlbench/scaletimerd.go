package sqlbench

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// scaleOverview starts a timerd process on s's store and namespace (API only: -workers=false,
// so that it leases nothing), as an operator runs it against a store others fill, and times
// cfg.StatsCalls requests each of the dashboard's overview (GET /ui/, which calls Queue.Stats
// and renders the page) and GET /v1/stats, as a client on this host sees them. Each answer must
// show the pending tasks as scheduled (as due, if cfg.Overdue). timerd's own code is internal to
// its module, so the binary is the way to measure its handler unchanged.
func scaleOverview(ctx context.Context, cfg ScaleConfig, s *scaleStore, pending int) (ScaleOverview, error) {
	o := ScaleOverview{Pending: pending}
	args, env := s.timerd()
	var out bytes.Buffer
	migrate := exec.CommandContext(ctx, cfg.Timerd, append([]string{"migrate"}, args...)...)
	migrate.Env = append(os.Environ(), env...)
	migrate.Stdout, migrate.Stderr = &out, &out
	if err := migrate.Run(); err != nil {
		return o, fmt.Errorf("timerd migrate: %v: %s", err, out.String())
	}
	addr, err := freeAddr()
	if err != nil {
		return o, err
	}
	tok := make([]byte, 16)
	rand.Read(tok)
	token := hex.EncodeToString(tok)
	out.Reset()
	cmd := exec.Command(cfg.Timerd, append(args, "-listen", addr, "-workers=false", "-rate", "0", "-log-level", "warn")...)
	cmd.Env = append(append(os.Environ(), env...), "TIMERD_TOKEN="+token)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return o, err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGTERM) //nolint:errcheck
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }() //nolint:errcheck
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill() //nolint:errcheck
			<-done
		}
	}()
	base := "http://" + addr
	client := &http.Client{Timeout: time.Minute}
	get := func(path string) (int, string, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+path, nil)
		if err != nil {
			return 0, "", err
		}
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), err
	}
	for deadline := time.Now().Add(time.Minute); ; {
		code, _, err := get("/readyz")
		if err == nil && code == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			return o, fmt.Errorf("timerd not ready after a minute (%d, %v): %s", code, err, out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	measure := func(path, want string) (ScaleTiming, error) {
		times := make([]time.Duration, cfg.StatsCalls)
		for i := range times {
			start := time.Now()
			code, body, err := get(path)
			times[i] = time.Since(start)
			if err != nil {
				return ScaleTiming{}, err
			}
			// Spaces out, so that either JSON layout matches.
			if code != http.StatusOK || !strings.Contains(strings.Join(strings.Fields(body), ""), want) {
				return ScaleTiming{}, fmt.Errorf("GET %s: %d, without %q: %.300s", path, code, want, body)
			}
		}
		return timing(times), nil
	}
	n, place := strconv.Itoa(pending), "scheduled"
	if cfg.Overdue {
		place = "due"
	}
	if o.Overview, err = measure("/ui/", `id="total-`+place+`">`+n+`<`); err != nil {
		return o, err
	}
	if o.APIStats, err = measure("/v1/stats", `"`+place+`":`+n); err != nil {
		return o, err
	}
	return o, nil
}

// freeAddr is a loopback address with a port free a moment ago.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	return l.Addr().String(), errors.Join(l.Close())
}
