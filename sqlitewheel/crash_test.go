package sqlitewheel

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// The durability tests run their writer in a child process, this test
// binary run again with childEnv set to its part ("add" or "work") and
// childFile to the database file; TestMain hands it to runChild. The child
// reports on stdout, one line per event, only after the event's call
// returned; the parent SIGKILLs it mid-run and checks the file.
const (
	childEnv  = "SQLITEWHEEL_CHILD"
	childFile = "SQLITEWHEEL_CHILD_FILE"
	// childLease is the worker child's lease: short, so the redelivery test
	// waits little, and long enough for a heartbeat to confirm claims.
	childLease = time.Second
)

// runChild runs the child's part until it is killed; it returns only on a
// failure, which the parent sees as an early exit.
func runChild() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "child:", err)
		return 3
	}
	ctx := context.Background()
	st, err := Open(ctx, os.Getenv(childFile), Options{})
	if err != nil {
		return fail(err)
	}
	var mu sync.Mutex
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(os.Stdout, format+"\n", args...) // unbuffered: one write(2) per line
	}
	switch os.Getenv(childEnv) {
	case "add":
		// Four goroutines add at once, as a server's handlers would: their
		// Adds share transactions (durable's group commit).
		q, err := durable.New(st, durable.Options{})
		if err != nil {
			return fail(err)
		}
		errs := make(chan error, 4)
		for g := range 4 {
			go func() {
				for i := 0; ; i++ {
					key := fmt.Sprintf("g%d-%d", g, i)
					if _, err := q.AddAfter(ctx, key, []byte(key), time.Hour); err != nil {
						errs <- err
						return
					}
					report("added %s", key)
				}
			}()
		}
		return fail(<-errs)
	case "work":
		q, err := durable.New(st, durable.Options{Lease: childLease, WorkerID: "child"})
		if err != nil {
			return fail(err)
		}
		err = q.Run(ctx, func(hctx context.Context, tk durable.Task) error {
			report("start %s", tk.Key)
			<-hctx.Done() // never settles: the parent kills the process first
			return hctx.Err()
		})
		return fail(fmt.Errorf("Run returned %v", err))
	}
	return fail(fmt.Errorf("unknown part %q", os.Getenv(childEnv)))
}

// child is a running child process and the lines it reported.
type child struct {
	cmd   *exec.Cmd
	lines chan string // closed at the child's end
}

// startChild starts the child's part on the file at path.
func startChild(t *testing.T, part, path string) *child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+part, childFile+"="+path)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, lines: make(chan string, 1<<16)}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			c.lines <- sc.Text()
		}
	}()
	t.Cleanup(func() { c.kill(t) }) // a failed test leaves no child behind
	return c
}

// kill SIGKILLs the child, reads what it reported up to its death, and
// returns those lines. It may be called again: the later calls return nil.
func (c *child) kill(t *testing.T) []string {
	t.Helper()
	if c.cmd.ProcessState != nil {
		return nil
	}
	if err := c.cmd.Process.Signal(syscall.SIGKILL); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("kill child: %v", err)
	}
	var rest []string
	timeout := time.After(patience)
	for {
		select {
		case l, ok := <-c.lines:
			if !ok {
				if err := c.cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
					t.Errorf("child ended with %v, want killed", err)
				}
				return rest
			}
			rest = append(rest, l)
		case <-timeout:
			t.Fatalf("the killed child's stdout did not close within %v", patience)
		}
	}
}

// await reads the child's lines until n of them start with prefix, and
// returns those n lines' fields after the prefix.
func (c *child) await(t *testing.T, prefix string, n int) [][]string {
	t.Helper()
	var got [][]string
	timeout := time.After(patience)
	for len(got) < n {
		select {
		case l, ok := <-c.lines:
			if !ok {
				t.Fatalf("the child ended after %d of %d %q lines", len(got), n, prefix)
			}
			if rest, ok := strings.CutPrefix(l, prefix+" "); ok {
				got = append(got, strings.Fields(rest))
			}
		case <-timeout:
			t.Fatalf("timed out after %v waiting for %d %q lines from the child (got %d)", patience, n, prefix, len(got))
		}
	}
	return got
}

// Every Add whose call returned in a process killed with SIGKILL mid-run is
// in the file when it is opened again (synchronous=FULL, WAL: the commit
// was on disk before Add returned), and the file is intact.
func TestKilledAdderLosesNoAcknowledgedAdd(t *testing.T) {
	st, path := openTemp(t, Options{})
	if err := st.Close(); err != nil { // the child owns the file while it runs
		t.Fatal(err)
	}
	c := startChild(t, "add", path)
	var keys []string
	for _, f := range c.await(t, "added", 300) {
		keys = append(keys, f[0])
	}
	for _, l := range c.kill(t) {
		if k, ok := strings.CutPrefix(l, "added "); ok {
			keys = append(keys, k)
		}
	}
	st = openAt(t, path, Options{})
	ctx := context.Background()
	var ok string
	if err := st.r.QueryRowContext(ctx, `PRAGMA integrity_check`).Scan(&ok); err != nil || ok != "ok" {
		t.Fatalf("integrity_check after the kill: %q, %v", ok, err)
	}
	for _, k := range keys {
		info, err := st.Get(ctx, k)
		if err != nil || info == nil || info.State != durable.StateScheduled || info.PayloadSize != len(k) {
			t.Errorf("%s, acknowledged before the kill: %+v, %v (want it scheduled)", k, info, err)
		}
	}
	checkCounts(t, st)
	t.Logf("%d acknowledged adds, all found after SIGKILL", len(keys))
}

// A worker killed with SIGKILL while its handlers run (a whole claimed
// batch, never settled) leaves its tasks in flight; once their leases run
// out they are delivered again, every one of them, none before its lease's
// end.
func TestKilledWorkerTasksAreRedeliveredAfterTheLease(t *testing.T) {
	const n = 40
	st, path := openTemp(t, Options{})
	ctx := context.Background()
	q, err := durable.New(st, durable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var items []durable.Item
	for i := range n {
		items = append(items, durable.Item{Key: "k" + strconv.Itoa(i), At: time.Now()})
	}
	if _, err := q.AddBatch(ctx, items); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	c := startChild(t, "work", path)
	c.await(t, "start", n)
	c.kill(t)

	st = openAt(t, path, Options{})
	leaseEnd := map[string]time.Time{}
	for _, it := range items {
		info, err := st.Get(ctx, it.Key)
		if err != nil || info == nil || info.State != durable.StateInFlight {
			t.Fatalf("%s after the kill: %+v, %v (want in flight)", it.Key, info, err)
		}
		leaseEnd[it.Key] = info.Due
	}
	// A claim every 10 ms, not only at the lease's end the claims report:
	// a reap before the lease's end would show.
	q, err = durable.New(st, durable.Options{PollInterval: 10 * time.Millisecond,
		OnError: func(err error) { t.Log("OnError:", err) }})
	if err != nil {
		t.Fatal(err)
	}
	type delivery struct {
		key string
		at  time.Time
	}
	got := make(chan delivery, 2*n)
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- q.Run(rctx, func(_ context.Context, tk durable.Task) error {
			got <- delivery{tk.Key, time.Now()}
			return nil
		})
	}()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(patience):
			t.Errorf("Run did not return within %v", patience)
		}
	}()
	seen := map[string]bool{}
	timeout := time.After(patience)
	for len(seen) < n {
		select {
		case d := <-got:
			if d.at.Before(leaseEnd[d.key]) {
				t.Errorf("%s redelivered at %v, before its lease's end %v", d.key, d.at, leaseEnd[d.key])
			}
			seen[d.key] = true
		case <-timeout:
			t.Fatalf("timed out after %v: %d of %d tasks redelivered", patience, len(seen), n)
		}
	}
	eventually(t, "every task settled", func() bool {
		s, err := st.Stats(ctx)
		return err == nil && s[0] == durable.ShardStats{}
	})
}

// eventually polls cond every 10ms until it holds, failing t after patience.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(patience)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", patience, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
