package dashboard

import (
	"sync"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Throughput counts this process's deliveries per minute for the
// overview's chart (chart.go), as asynqmon's processed/failed graph does:
// a durable.Observer, which the server adds to its Queue's.
//
// A delivery counts when its attempt does: processed are the handlers that
// returned done, retry or dead, or detached (a 202 Accepted); failed are
// those that returned retry or dead, and the completions (Complete, a
// receiver's /fail) that made a task retry or die. A postponement
// (Retry-After, flow control) and a release at shutdown count neither, as
// they count no attempt. Complete's successes are not counted again: their
// delivery was, when it detached.
//
// What it does not see: other processes' deliveries (each process counts
// its own workers, and the completions its API took: a failed completion
// taken by another process than the one that delivered shows there as
// failed without processed), and anything before this process started:
// the counts live in memory only, throughputMinutes of them, and a restart
// begins them again at zero. The sum over processes, and over restarts, is
// in Prometheus: durable_deliveries_total.
//
// It is safe for concurrent use.
type Throughput struct {
	durable.NoopObserver
	now     func() time.Time
	started time.Time

	mu sync.Mutex
	// ring holds the counts of the last throughputMinutes minutes: the
	// minute m (Unix minutes) is ring[m % throughputMinutes] while its
	// minute field says m; a slot whose minute is older is stale and
	// reads as zero.
	ring [throughputMinutes]minuteCount
}

// throughputMinutes is the chart's window: the last hour, a bar a minute,
// which shows a storm of failures (issue 31: 29 deaths in two minutes) as
// bars of their own, and fits 60 bars in the overview's width.
const throughputMinutes = 60

type minuteCount struct {
	minute            int64 // Unix minutes
	processed, failed int
}

// NewThroughput returns an empty Throughput on the clock now (time.Now in
// the server); it counts from now on.
func NewThroughput(now func() time.Time) *Throughput {
	return &Throughput{now: now, started: now()}
}

// add counts processed and failed deliveries at the current minute.
func (t *Throughput) add(processed, failed int) {
	m := t.now().Unix() / 60
	t.mu.Lock()
	c := &t.ring[m%throughputMinutes]
	if c.minute != m {
		*c = minuteCount{minute: m}
	}
	c.processed += processed
	c.failed += failed
	t.mu.Unlock()
}

func (t *Throughput) HandlerFinished(e durable.FinishEvent) {
	switch e.Outcome {
	case string(durable.OutcomeDone), "detach":
		t.add(1, 0)
	case string(durable.OutcomeRetry), string(durable.OutcomeDead):
		t.add(1, 1)
	}
}

func (t *Throughput) Completed(e durable.CompleteEvent) {
	if e.Code == durable.SettleRetry || e.Code == durable.SettleDead {
		t.add(0, 1)
	}
}

// minuteCounts are the counts of the throughputMinutes minutes up to and
// including the one at now, oldest first, and when counting began.
func (t *Throughput) minuteCounts(now time.Time) ([throughputMinutes]minuteCount, time.Time) {
	var out [throughputMinutes]minuteCount
	last := now.Unix() / 60
	t.mu.Lock()
	defer t.mu.Unlock()
	for i := range out {
		m := last - throughputMinutes + 1 + int64(i)
		out[i] = minuteCount{minute: m}
		if c := t.ring[m%throughputMinutes]; c.minute == m {
			out[i] = c
		}
	}
	return out, t.started
}
