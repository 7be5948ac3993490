package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/go-timingwheel/timingwheel/bench/internal/measure"
	"github.com/go-timingwheel/timingwheel/bench/internal/results"
)

// drive runs -rounds rounds; each round runs every point of the sweep
// (-deadline × -conns) in turn, with one server and one client per library
// at the same time, and prints one results.HTTPServer line per server as
// soon as its point ends. Each round starts the libraries in a different
// order, so that none always starts first, on a quieter machine.
func drive(c config) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for round := 1; round <= c.rounds; round++ {
		rc := c
		k := (round - 1) % len(c.libs)
		rc.libs = append(slices.Clone(c.libs[k:]), c.libs[:k]...)
		for _, d := range c.deadlines {
			rc.deadline = d
			for _, conns := range c.conns {
				res, err := runRound(ctx, self, rc, conns, round)
				if ctx.Err() != nil {
					return ctx.Err() // interrupted: the children were killed
				}
				if err != nil {
					return fmt.Errorf("round %d, deadline %v, %d connections: %w", round, d, conns, err)
				}
				for _, r := range res {
					r.Round = round
					if err := measure.Emit(os.Stdout, r); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// runRound runs one point of one round: it starts the servers, then their clients, and collects the results.
// Whatever happens, every child it started is killed by pid and reaped
// before it returns.
func runRound(ctx context.Context, self string, c config, conns, round int) ([]results.HTTPServer, error) {
	var children []*child
	defer func() {
		for _, p := range children {
			p.kill()
		}
	}()
	run := func(args ...string) (*child, error) {
		p, err := start(ctx, self, args...)
		if err == nil {
			children = append(children, p)
		}
		return p, err
	}

	servers := make([]*child, len(c.libs))
	addrs := make([]string, len(c.libs))
	for i, lib := range c.libs {
		var err error
		args := []string{"-role", "server", "-lib", lib, "-tick", c.tick.String(), "-idle", c.idle.String(),
			"-deadline", c.deadline.String(), "-slow-deadline", c.slowDeadline.String()}
		if c.cpuProfile != "" {
			args = append(args, "-cpuprofile", filepath.Join(c.cpuProfile,
				fmt.Sprintf("%s-%v-%d-%d.prof", lib, c.deadline, conns, time.Now().UnixNano())))
		}
		if servers[i], err = run(args...); err != nil {
			return nil, err
		}
		if addrs[i], err = servers[i].line(); err != nil {
			return nil, fmt.Errorf("%s server: %w", lib, err)
		}
	}
	clients := make([]*child, len(c.libs))
	for i := range c.libs {
		var err error
		if clients[i], err = run(clientArgs(c, addrs[i], conns, clientSeed(round, i))...); err != nil {
			return nil, err
		}
	}

	select {
	case <-time.After(c.warmup):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	for _, s := range servers {
		if _, err := io.WriteString(s.stdin, "start\n"); err != nil {
			return nil, err
		}
	}

	out := make([]results.HTTPServer, len(c.libs))
	for i, lib := range c.libs {
		var rep clientReport
		if err := clients[i].result(&rep); err != nil {
			return nil, fmt.Errorf("%s client: %w", lib, err)
		}
		// Its client gone, the server measures itself and exits.
		servers[i].stdin.Close()
		res := &out[i]
		if err := servers[i].result(res); err != nil {
			return nil, fmt.Errorf("%s server: %w", lib, err)
		}
		res.Conns, res.WarmupS, res.DurationS, res.IntervalMs = conns, c.warmup.Seconds(), c.duration.Seconds(), measure.Ms(c.interval)
		res.Responses, res.IdleUnclosed, res.Redials = rep.Responses, rep.IdleUnclosed, rep.Redials
		res.Skipped, res.Latency = rep.Skipped, rep.Latency
		res.SlowFrac, res.IdleFrac = c.slowFrac, c.idleFrac
	}
	return out, nil
}

// clientArgs are the arguments of a client of the point: it loads the
// server at addr over conns connections, its randomness seeded by seed.
func clientArgs(c config, addr string, conns int, seed uint64) []string {
	return []string{"-role", "client", "-addr", addr, "-conns", strconv.Itoa(conns), "-seed", fmt.Sprint(seed),
		"-warmup", c.warmup.String(), "-duration", c.duration.String(), "-interval", c.interval.String(), "-idle", c.idle.String(),
		"-slow-frac", fmt.Sprint(c.slowFrac), "-idle-frac", fmt.Sprint(c.idleFrac)}
}

// clientSeed is the -seed of the client of the i-th server started in a
// round: no two clients of a round share one, so their connections' phases
// are independent (see -seed), and each round draws new ones.
func clientSeed(round, i int) uint64 { return uint64(round)<<16 | uint64(i+1) }

// child is a process the driver started, with pipes to its stdin and stdout.
// A server also ends when its stdin closes, so it does not outlive a driver
// that was killed; a client ends after -duration.
type child struct {
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	stdout *bufio.Reader
	waited bool
}

func start(ctx context.Context, name string, args ...string) (*child, error) {
	cmd := exec.CommandContext(ctx, name, args...) // killed if ctx is cancelled
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &child{cmd: cmd, stdin: stdin, stdout: bufio.NewReader(stdout)}, nil
}

// line reads the next line the child prints.
func (p *child) line() (string, error) {
	s, err := p.stdout.ReadString('\n')
	return strings.TrimSpace(s), err
}

// result reads the child's last line, JSON, into v and waits for it to exit.
func (p *child) result(v any) error {
	l, err := p.line()
	if err == nil {
		err = json.Unmarshal([]byte(l), v)
	}
	if err != nil {
		return err
	}
	p.waited = true
	return p.cmd.Wait()
}

// kill ends the child by its pid, unless it has been waited for, and reaps it.
func (p *child) kill() {
	if !p.waited {
		p.waited = true
		p.cmd.Process.Kill()
		p.cmd.Wait()
	}
}

func parseInts(list string) ([]int, error) {
	var out []int
	for _, s := range splitList(list) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}

func parseDurations(list string) ([]time.Duration, error) {
	var out []time.Duration
	for _, s := range splitList(list) {
		d, err := time.ParseDuration(s)
		if err != nil {
			return nil, err
		}
		if d <= 0 {
			return nil, fmt.Errorf("deadline %v: must be positive", d)
		}
		out = append(out, d)
	}
	return out, nil
}

func splitList(list string) []string {
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
