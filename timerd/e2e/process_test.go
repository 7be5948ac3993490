package e2e

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// proc is one timerd process.
type proc struct {
	t    *testing.T
	name string
	cmd  *exec.Cmd
	addr string // where it listens, from its "listening" log line

	mu     sync.Mutex
	stderr []string
	exited chan struct{} // closed when Wait returned
	state  *os.ProcessState
}

// token is the bearer token every test process gets.
const token = "e2e-token"

// environ is the test's environment without TIMERD_ variables, plus extra.
func environ(extra ...string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TIMERD_") {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// startTimeout bounds a process's start, and its end once killed: generous,
// for a loaded machine; a process that takes longer fails the test.
const startTimeout = time.Minute

// start runs timerd with args and env, waits until it logs that it
// listens, and kills it (by pid) when t ends if it still runs, even when t
// failed.
func start(t *testing.T, name string, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{t: t, name: name, exited: make(chan struct{})}
	p.cmd = exec.Command(timerdBin, args...)
	p.cmd.Env = env
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.cmd.Process.Kill() // by pid; an error means it has exited
		select {
		case <-p.exited:
		case <-time.After(startTimeout):
			t.Errorf("%s (pid %d) still not reaped %v after SIGKILL", name, p.cmd.Process.Pid, startTimeout)
		}
	})
	listening := make(chan string, 1)
	go p.read(stderr, listening)
	select {
	case p.addr = <-listening:
	case <-p.exited:
		t.Fatalf("%s exited before listening: %v\n%s", name, p.state, p.log())
	case <-time.After(startTimeout):
		t.Fatalf("%s did not log \"listening\" within %v\n%s", name, startTimeout, p.log())
	}
	return p
}

// read keeps the process's log lines, sends the listening address, and
// reaps the process at EOF.
func (p *proc) read(r io.Reader, listening chan<- string) {
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		p.mu.Lock()
		p.stderr = append(p.stderr, line)
		p.mu.Unlock()
		var rec struct{ Msg, Addr string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "listening" {
			listening <- rec.Addr
		}
	}
	io.Copy(io.Discard, r)
	p.cmd.Wait()
	p.state = p.cmd.ProcessState
	close(p.exited)
}

func (p *proc) log() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return strings.Join(p.stderr, "\n")
}

func (p *proc) signal(sig syscall.Signal) {
	if err := p.cmd.Process.Signal(sig); err != nil {
		p.t.Fatalf("%s: signal %v: %v", p.name, sig, err)
	}
}

// wait waits up to d for the process to exit and returns its exit code.
func (p *proc) wait(d time.Duration) int {
	p.t.Helper()
	select {
	case <-p.exited:
		return p.state.ExitCode()
	case <-time.After(d):
		p.t.Fatalf("%s still runs %v later\n%s", p.name, d, p.log())
		return -1
	}
}

// run runs timerd to its end (for the ones that must refuse to start) and
// returns its exit code and output.
func run(t *testing.T, env []string, args ...string) (int, string) {
	cmd := exec.Command(timerdBin, args...)
	cmd.Env = env
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(startTimeout):
		cmd.Process.Kill() // by pid
		select {
		case <-done:
		case <-time.After(startTimeout):
			t.Errorf("timerd %v (pid %d) still not reaped %v after SIGKILL", args, cmd.Process.Pid, startTimeout)
		}
		t.Fatalf("timerd %v ran %v: it should have refused to start", args, startTimeout)
	}
	if err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return cmd.ProcessState.ExitCode(), string(out)
}
