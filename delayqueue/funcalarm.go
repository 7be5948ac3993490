package delayqueue

import "time"

// funcAlarm is the alarm of a ringing queue (see Ring): a runtime timer that
// calls its function, as time.AfterFunc does. Its methods are called with
// the queue's lock held.
//
// The queue moves it later by renewing it, so that the next Set arms a new
// timer and the one armed is stopped, rather than by resetting the armed
// timer (see rearmLocked): the runtime takes a Reset of a timer in its heap
// as a reason to wake a thread to look at its timers (time.go's
// timer.modify: whenever no other timer of that heap was modified since the
// heap was last adjusted, earlier or later alike; with no thread in the
// network poller, wakep starts one), where arming a timer wakes one only if
// it is the heap's earliest, as time.AfterFunc does. The queue moves its
// alarm later every time its head leaves before it is due: a net/http
// server with 50 ms request deadlines, each its wheel's head while the
// request runs, used 1.071× the CPU of the same server on time.AfterFunc
// with Reset, 1.02× and 0.996× (two runs) renewing on every later move
// (medians of 5 rounds, bench/cmd/httpserver -deadline 50ms -conns 300
// -libs wheel,runtime, binaries alternated; docs/bench/issue17.md). Those
// runs' clients sent in lockstep (fixed in 1243cb3); with independent
// clients (4 alternated pairs per point, CPU wheel ÷ runtime), Reset in
// place for every move read 1.036× against this code's 0.990× at 50 ms and
// 300 connections, 1.079× against 0.996× at 200 ms and 30, 1.038× against
// 0.986× at 10 s and 30, and 0.979× against 1.022× at 1 s and 30, the one
// point where it wins (docs/bench/alarm-resetonly-sweep.jsonl). Resetting
// in place only where the runtime already holds an earlier modified time
// that is still ahead (so modify wakes nobody) read the same: 1.044×
// against 1.005× at 50 ms and 300, 1.064× against 1.017× at 200 ms and
// 30, 0.986× against 1.018× at 1 s and 30
// (docs/bench/alarm-hybrid-sweep.jsonl): a timer modified later makes the
// runtime's idle Ps break the poller instead. So did keeping the stopped
// alarms in the runtime's heaps with far-future ballast timers (1.162×
// against 1.005× at 200 ms and 30; docs/bench/alarm-ballast-sweep.jsonl):
// stale early times there make sysmon and idle Ps wake. A timer
// stopped stays in the runtime's heap, as the runtime's own stopped timers
// do, until the runtime clears it; it is garbage then.
//
// Moving earlier, and arming after a Stop or a ring, reset the timer in
// place: the runtime then wakes a thread only as it would for a new timer
// due that early, and nothing is allocated, so that a value alone in the
// queue, offered and removed in turn, allocates no runtime timer.
type funcAlarm struct {
	t *time.Timer // nil until the first Set, and after renew
	f func()
}

func (a *funcAlarm) C() <-chan time.Time { return nil }

func (a *funcAlarm) Set(deadline time.Time) {
	if a.t == nil {
		a.t = time.AfterFunc(time.Until(deadline), a.f)
	} else {
		a.t.Reset(time.Until(deadline))
	}
}

func (a *funcAlarm) Stop() {
	if a.t != nil {
		a.t.Stop()
	}
}

// renew stops the armed timer and lets the next Set arm a new one. If the
// old one is ringing now, its ring finds nothing due and rearms.
func (a *funcAlarm) renew() {
	a.t.Stop()
	a.t = nil
}
