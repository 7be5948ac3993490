package e2e

import (
	"fmt"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Two timerd processes share a namespace; one is SIGKILLed while callbacks
// it sends are in flight. Every task not cancelled is delivered at least
// once, none before its due time, none after its cancel returned, and the
// tasks the killed process held are delivered by the survivor once their
// lease is over. Nothing is timed but "not early": each step waits for the
// event it needs, a minute at most, however slow the machine.
func TestKillOneOfTwo(t *testing.T) { killOneOfTwo(t, standalone(t)) }

// The same on a 3-master Redis Cluster: the namespace's shards are spread
// over the masters.
func TestKillOneOfTwoCluster(t *testing.T) { killOneOfTwo(t, cluster(t)) }

// The same on PostgreSQL: the two processes claim with SKIP LOCKED, and
// an add by one wakes the other through LISTEN/NOTIFY.
func TestKillOneOfTwoPostgres(t *testing.T) { killOneOfTwo(t, postgres(t)) }

func killOneOfTwo(t *testing.T, target target) {
	const (
		n      = 300
		spread = 3 * time.Second // the due times
		lease  = time.Second
		slow   = 200 * time.Millisecond // the receiver's answer
	)
	w := newWorld(t, target)
	env := environ("TIMERD_TOKEN=" + token)
	flags := w.args("-lease", lease.String(), "-concurrency", "16", "-shutdown-grace", "5s")
	a := start(t, "A", env, flags...)
	b := start(t, "B", env, flags...)
	rc := newReceiver(t, slow)
	ts := w.tasks(t, a)

	// The first task is due a lead after the setup's start that covers the
	// setup (n creates, n/5 cancels): on a loaded machine the setup once took
	// longer than a fixed second plus the spread, every task was delivered
	// before the loop below could catch one in flight, and the run failed.
	lead := setupLead(ts, rc.url(), n+n/5)
	begin := time.Now()
	due := map[string]time.Time{}
	for i := range n {
		key := fmt.Sprintf("task/%03d", i)
		due[key] = begin.Add(lead + time.Duration(i)*spread/n).Truncate(time.Millisecond)
		ts.create(key, due[key], rc.url())
	}
	// Every fifth task is cancelled: mostly still scheduled, but on a slow
	// machine perhaps in flight (it then finishes as cancelled) or done (a
	// retained task is forgotten); Cancel answers true for each.
	cancelled := map[string]time.Time{} // key → when its cancel returned
	for i := 0; i < n; i += 5 {
		key := fmt.Sprintf("task/%03d", i)
		require.True(t, ts.cancel(key), key)
		cancelled[key] = time.Now()
	}
	setupTook := time.Since(begin)

	// SIGKILL a process once a quarter of the tasks are delivered, at a
	// moment the receiver is answering a callback it sent (its source port
	// is one of the process's sockets): whichever of the two that is, since
	// the store decides which claims what (on PostgreSQL one process can
	// win every claim for a while, and A alone was never caught in flight
	// in one CI run of six).
	var killedAt time.Time
	var killed, survivor *proc
	deadline := time.Now().Add(time.Minute)
	for killed == nil {
		done := len(rc.completed())
		require.True(t, time.Now().Before(deadline) && done < n-len(cancelled),
			"neither process had a callback in flight after %d deliveries (%d done; setup lead %v, setup took %v)\nA's log:\n%s\nB's log:\n%s",
			n/4, done, lead, setupTook, a.log(), b.log())
		if done >= n/4 {
			// The sockets first, then who is being answered: reading /proc
			// is slow on a loaded machine, and a snapshot of the senders
			// taken before it is stale by the time it is compared.
			ports := [2]map[int]bool{localPorts(a.cmd.Process.Pid), localPorts(b.cmd.Process.Pid)}
			senders := rc.senders()
			for i, pair := range [][2]*proc{{a, b}, {b, a}} {
				mine := ports[i]
				if slices.ContainsFunc(senders, func(p int) bool { return mine[p] }) {
					killed, survivor = pair[0], pair[1]
					break
				}
			}
			if killed != nil {
				killed.signal(syscall.SIGKILL)
				killedAt = time.Now()
			}
		}
		time.Sleep(2 * time.Millisecond)
	}
	killed.wait(time.Minute)

	want := map[string]bool{}
	for key := range due {
		if _, ok := cancelled[key]; !ok {
			want[key] = true
		}
	}
	deadline = time.Now().Add(lease + time.Minute)
	for {
		done := rc.completed()
		missing := 0
		for key := range want {
			if !done[key] {
				missing++
			}
		}
		if missing == 0 {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d tasks never delivered\nthe survivor's log:\n%s", missing, survivor.log())
		time.Sleep(20 * time.Millisecond)
	}

	interrupted := 0
	all := rc.deliveries()
	for _, d := range all {
		require.False(t, d.arrived.Before(due[d.key]), "%s delivered %v before its due time", d.key, due[d.key].Sub(d.arrived))
		if c, ok := cancelled[d.key]; ok {
			require.False(t, d.arrived.After(c), "%s delivered %v after its cancel returned", d.key, d.arrived.Sub(c))
		}
		if _, ok := cancelled[d.key]; ok || d.completed || d.arrived.After(killedAt) {
			continue // a cancelled task in flight finishes as cancelled, even when its lease ends
		}
		// In flight in the killed process: the survivor delivers it after the lease.
		interrupted++
		redelivered := false
		for _, e := range all {
			if e.key == d.key && e.completed && e.arrived.After(killedAt) {
				require.GreaterOrEqual(t, e.arrived.Sub(d.arrived), lease/2,
					"%s delivered again %v after the delivery the killed process died in, within its lease", d.key, e.arrived.Sub(d.arrived))
				redelivered = true
			}
		}
		require.True(t, redelivered, "%s was in flight in the killed process and never delivered again", d.key)
	}
	require.Positive(t, interrupted, "no callback was cut short by the SIGKILL")
	t.Logf("%d tasks, %d cancelled, %d deliveries, %d in flight in %s when it was killed",
		n, len(cancelled), len(all), interrupted, killed.name)

	survivor.signal(syscall.SIGTERM)
	require.Equal(t, 0, survivor.wait(time.Minute), survivor.log())
	st := w.stats(t)
	require.Zero(t, st.Due+st.Scheduled+st.InFlight+st.Dead, "left in the store: %+v", st)
}

// setupLead returns how long after its start a setup of ops creates and
// cancels should put its first due time: three times what ops take at the
// rate of a few timed ones (tasks due in an hour, cancelled at once, so
// never delivered), and at least a second.
func setupLead(ts *tasks, callback string, ops int) time.Duration {
	const k = 10
	start := time.Now()
	for i := range k {
		key := fmt.Sprintf("lead/%d", i)
		ts.create(key, start.Add(time.Hour), callback)
		if !ts.cancel(key) {
			ts.t.Fatalf("%s: not pending right after its create", key)
		}
	}
	perOp := time.Since(start) / (2 * k)
	return max(time.Second, 3*perOp*time.Duration(ops))
}
