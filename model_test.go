package timingwheel

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The model-based test holds the wheel against a reference that knows nothing
// of levels, buckets or the delay queue: a list of timers, each with the tick
// at which it is due. A timer set at clock-elapsed e for d > 0 is due at tick
// ceil((e+d)/tick) (e+d saturating at math.MaxInt64); after a step at elapsed
// E, exactly the timers due at or before floor(E/tick) have fired, each once
// per arming. The harness drives the wheel with newManual and
// WithInlineCallbacks, so every expiration happens inside step, on the test's
// goroutine, and the comparison after each step is exact.
//
// In inline mode a timer due at once (d <= 0) is put in the bucket of the
// tick after its shard's currentTick or the clock's tick, whichever is
// later. currentTick depends on which buckets were flushed, which only a
// model of the buckets could predict, so the harness reads it
// from the timer's shard once the timer is armed, and checks separately that
// no shard's currentTick ever runs ahead of the clock.
//
// A Ticker of period p armed at elapsed e is, in the reference, a list of
// phase points e+p, e+2p, ... (saturating): its pending point is next, due at
// tick ceil(next/tick). A step at elapsed E that reaches that tick sends E on
// C if C is empty, or drops the tick if C holds one (C never holds two), and
// moves next to the first phase point after E, except that after k drops in
// a row it first skips 2^k-1 further points (the back-off documented on
// NewTicker, capped at 2^maxTickerBackoff). So a ticker fires at most once a
// step, never before next, and keeps its phase; after Stop or Reset returns
// C is empty (no stale tick), and Reset starts new phase points from its own
// time.

// A chooser supplies the harness's choices: a seeded PRNG, or fuzz input.
type chooser interface {
	intn(n int64) int64 // in [0, n); n > 0
	done() bool         // input exhausted
}

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int64) int64 { return c.r.Int64N(n) }
func (c randChooser) done() bool         { return false }

// byteChooser decodes fuzz input: one byte per small choice, eight per large
// one, zeros once the input runs out.
type byteChooser struct {
	b []byte
	i int
}

func (c *byteChooser) next() uint64 {
	c.i++
	if c.i > len(c.b) {
		return 0
	}
	return uint64(c.b[c.i-1])
}

func (c *byteChooser) intn(n int64) int64 {
	v := c.next()
	if n > 256 {
		for range 7 {
			v = v<<8 | c.next()
		}
	}
	return int64(v % uint64(n))
}

func (c *byteChooser) done() bool { return c.i >= len(c.b) }

type modelKind uint8

const (
	modelFunc     modelKind = iota // AfterFunc
	modelChan                      // NewTimer
	modelSchedule                  // ScheduleFunc
	modelTicker                    // NewTicker
)

func (k modelKind) String() string {
	return [...]string{"func", "chan", "schedule", "ticker"}[k]
}

type modelTimer struct {
	kind   modelKind
	timer  *Timer  // all kinds but tickers
	ticker *Ticker // tickers
	active bool    // pending: will fire unless stopped (never, once the wheel stopped)
	due    int64   // tick at which it fires, while active and the wheel runs
	target int64   // ns since epoch it must not fire before: e+d, or a schedule's next
	// Schedules and tickers.
	period int64
	finite bool // a countdown schedule, rather than Every
	left   int  // runs a countdown has left to grant
	// Channel timers and tickers: a value sent and not yet received.
	buffered bool
	value    int64 // ns since epoch of the buffered value
	// Tickers: consecutive ticks dropped for a full C.
	drops int
}

// hasC says whether m delivers values on a channel.
func (m *modelTimer) hasC() bool { return m.kind == modelChan || m.kind == modelTicker }

func (m *modelTimer) c() <-chan time.Time {
	if m.kind == modelTicker {
		return m.ticker.C
	}
	return m.timer.C
}

// countdown is a Scheduler that grants a fixed number of runs, period apart.
type countdown struct {
	left   *int
	period time.Duration
}

func (c countdown) Next(prev time.Time) time.Time {
	if *c.left == 0 {
		return time.Time{}
	}
	*c.left--
	return prev.Add(c.period)
}

// modelConfig is one wheel shape; sizes that are not powers of two are
// rounded up by New.
type modelConfig struct {
	tick time.Duration
	size int
}

var modelConfigs = []modelConfig{
	{time.Millisecond, 2},
	{7 * time.Millisecond, 3},
	{time.Millisecond, 8},
	{7 * time.Millisecond, 64},
	{time.Nanosecond, 2},
	{3 * time.Nanosecond, 4},
	{10 * time.Millisecond, 512},
}

type harness struct {
	t     testing.TB
	c     chooser
	desc  string
	tw    *TimingWheel
	clock *FakeClock
	epoch time.Time
	tick  int64
	size  int64 // after rounding up

	maxTimers int
	elapsed   int64 // the model's clock: ns since epoch
	stopped   bool  // the wheel has been stopped
	timers    []*modelTimer
	events    []int // ids of timers whose callback ran during the current step

	pending               int
	fired, stops, dropped uint64
	ops                   int
	recent                [24]string // the last operations, for failure messages
	scheduleRunsBudget    int64      // max schedule runs one step may cause
	maxLevels             int
	immediateChecked      int
	ticksSent, ticksLost  int // tickers' ticks sent on C, and dropped for a full C
	levelsSeen            int // the most levels the wheel has had
}

func newHarness(t testing.TB, c chooser, cfg modelConfig, desc string) *harness {
	clock := NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC))
	tw, err := newManual(cfg.tick, cfg.size, WithClock(clock), WithInlineCallbacks())
	require.NoError(t, err)
	t.Cleanup(tw.Stop)
	size := int64(1)
	for size < int64(cfg.size) {
		size <<= 1
	}
	require.Equal(t, size, tw.size, "wheel size must be rounded up to a power of two")
	bitsPerLevel := 0
	for 1<<bitsPerLevel < size {
		bitsPerLevel++
	}
	return &harness{
		t: t, c: c, tw: tw, clock: clock, epoch: clock.Now(),
		tick: int64(cfg.tick), size: size,
		desc:               fmt.Sprintf("%s tick=%v size=%d", desc, cfg.tick, cfg.size),
		maxTimers:          300,
		scheduleRunsBudget: 300,
		maxLevels:          63/bitsPerLevel + 2,
	}
}

// String describes where the harness is, for failure messages.
func (h *harness) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, op %d, elapsed %d ns (tick %d), recent ops:", h.desc, h.ops, h.elapsed, h.elapsed/h.tick)
	for i := range len(h.recent) {
		if s := h.recent[(h.ops+i)%len(h.recent)]; s != "" {
			b.WriteString("\n  " + s)
		}
	}
	return b.String()
}

func (h *harness) note(format string, args ...any) {
	h.recent[h.ops%len(h.recent)] = fmt.Sprintf("%d: ", h.ops) + fmt.Sprintf(format, args...)
}

func satAdd(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// ceilTick is the first tick boundary at or after ns > 0.
func ceilTick(ns, tick int64) int64 {
	q := ns / tick
	if q*tick != ns {
		q++
	}
	return q
}

// arm is the model of startLocked: m is set to fire d after now. For d <= 0
// the caller completes it with armed once the wheel has armed m.timer.
func (h *harness) arm(m *modelTimer, d time.Duration) {
	ns := satAdd(h.elapsed, int64(d))
	wasActive := m.active
	m.active, m.target = true, ns
	if d <= 0 {
		h.immediateChecked++
	} else {
		m.due = ceilTick(ns, h.tick)
	}
	if !wasActive && !h.stopped {
		h.pending++
	}
}

// armed completes arm for a timer due at once, now that it is in its shard:
// a channel timer sends at once; a callback waits for its shard's next tick.
func (h *harness) armed(m *modelTimer, d time.Duration) {
	switch {
	case d > 0 || h.stopped:
	case m.kind == modelChan:
		h.fired++
		m.active = false
		h.pending--
		m.buffered, m.value = true, h.elapsed
	default:
		m.due = max(m.timer.currentTick(), h.elapsed/h.tick) + 1
	}
}

// nextRun moves schedule m past its run firing at tick F = m.due, as the
// wheel's rearmLocked does: later runs due at or before F are merged into it,
// for up to maxSkips Next calls, after which the schedule restarts one period
// after F. Every Next call takes a grant; nextRun reports false when the
// scheduler ends.
func (h *harness) nextRun(m *modelTimer) bool {
	F := m.due
	dueOf := func(ns int64) int64 {
		if ns <= 0 {
			return 0
		}
		return ceilTick(ns, h.tick)
	}
	if !h.grant(m) {
		return false
	}
	m.target += m.period
	for skips := 0; dueOf(m.target) <= F; skips++ {
		if !h.grant(m) {
			return false
		}
		if skips == maxSkips {
			m.target = F*h.tick + m.period
			break
		}
		m.target += m.period
	}
	m.due = max(dueOf(m.target), F+1)
	return true
}

// grant is the model of the scheduler's Next: whether m runs again.
func (h *harness) grant(m *modelTimer) bool {
	if !m.finite {
		return true
	}
	if m.left == 0 {
		return false
	}
	m.left--
	return true
}

// armTicker is the model of NewTicker(d) and Ticker.Reset(d), d > 0: phase
// points from now, the first one pending.
func (h *harness) armTicker(m *modelTimer, d time.Duration) {
	wasActive := m.active
	m.active, m.buffered = true, false
	m.period, m.drops = int64(d), 0
	h.setTickerNext(m, satAdd(h.elapsed, int64(d)))
	if !wasActive && !h.stopped {
		h.pending++
	}
}

func (h *harness) setTickerNext(m *modelTimer, next int64) {
	m.target, m.due = next, never
	if next < math.MaxInt64 {
		m.due = ceilTick(next, h.tick)
	}
}

// tickerFired is the model of a ticker reaching its due tick in a step at
// elapsed E: the tick is sent if C is empty and dropped otherwise, and the
// next pending phase point is the first after E, past the back-off's skipped
// points.
func (h *harness) tickerFired(m *modelTimer) {
	E := h.elapsed
	if m.buffered {
		m.drops = min(m.drops+1, maxTickerBackoff)
		h.ticksLost++
	} else {
		m.buffered, m.value, m.drops = true, E, 0
		h.ticksSent++
	}
	skip := int64(math.MaxInt64) // period << drops, saturating
	if m.period <= math.MaxInt64>>m.drops {
		skip = m.period << m.drops
	}
	next := satAdd(m.target, skip)
	if next <= E {
		next += (E - next) / m.period * m.period // the last phase point at or before E
		next = satAdd(next, m.period)
	}
	h.setTickerNext(m, next)
}

// tickerPeriod draws a Ticker's period: mostly periods a ticker is made
// with, sometimes any duration, zero, negative and huge ones included.
func (h *harness) tickerPeriod() time.Duration {
	if h.c.intn(4) == 0 {
		return h.duration()
	}
	return time.Duration(h.period())
}

func (h *harness) callback(id int) func() {
	return func() { h.events = append(h.events, id) }
}

func (h *harness) add(kind modelKind) {
	id := len(h.timers)
	m := &modelTimer{kind: kind}
	switch kind {
	case modelFunc:
		d := h.duration()
		h.note("AfterFunc(%d) -> #%d", d, id)
		h.arm(m, d)
		m.timer = h.tw.AfterFunc(d, h.callback(id))
		h.armed(m, d)
	case modelChan:
		d := h.duration()
		h.note("NewTimer(%d) -> #%d", d, id)
		h.arm(m, d)
		m.timer = h.tw.NewTimer(d)
		h.armed(m, d)
	case modelSchedule:
		m.period = h.period()
		var s Scheduler = Every(time.Duration(m.period))
		desc := fmt.Sprintf("Every(%d)", m.period)
		if h.c.intn(3) == 0 {
			// At least one run: a schedule with none panics (see
			// TestScheduleNeverRunsPanics).
			m.finite, m.left = true, 1+int(h.c.intn(4))
			left := m.left // the wheel's copy of the countdown
			s = countdown{left: &left, period: time.Duration(m.period)}
			desc = fmt.Sprintf("countdown(%d, %d)", m.left, m.period)
		}
		h.note("ScheduleFunc(%s) -> #%d", desc, id)
		if h.grant(m) {
			h.arm(m, time.Duration(m.period))
		}
		m.timer = h.tw.ScheduleFunc(s, h.callback(id))
	case modelTicker:
		d := h.tickerPeriod()
		if d <= 0 {
			h.note("NewTicker(%d) want panic", d)
			require.Panics(h.t, func() { h.tw.NewTicker(d) }, "%v", h)
			require.Nil(h.t, h.tw.Tick(d), "%v", h)
			return
		}
		h.note("NewTicker(%d) -> #%d", d, id)
		h.armTicker(m, d)
		m.ticker = h.tw.NewTicker(d)
	}
	h.timers = append(h.timers, m)
}

func (h *harness) pick() (int, *modelTimer) {
	id := int(h.c.intn(int64(len(h.timers))))
	return id, h.timers[id]
}

func (h *harness) stop() {
	id, m := h.pick()
	if m.kind == modelTicker {
		h.note("#%d(ticker).Stop()", id)
		h.stopTicker(m)
		m.ticker.Stop()
		if len(m.ticker.C) != 0 {
			h.t.Fatalf("%v: a tick on C after Stop returned", h)
		}
		return
	}
	want := m.active || (m.kind == modelChan && m.buffered)
	h.note("#%d(%v).Stop() want %v", id, m.kind, want)
	if m.active {
		m.active = false
		h.stops++
		if !h.stopped {
			h.pending--
		}
	}
	m.buffered = false
	if got := m.timer.Stop(); got != want {
		h.t.Fatalf("%v: Stop returned %v", h, got)
	}
}

// stopTicker is the model of Ticker.Stop: it counts as a Stop that
// prevented a fire when the ticker was pending, and empties C.
func (h *harness) stopTicker(m *modelTimer) {
	if m.active {
		m.active = false
		h.stops++
		if !h.stopped {
			h.pending--
		}
	}
	m.buffered = false
}

func (h *harness) reset() {
	id, m := h.pick()
	if m.kind == modelTicker {
		h.resetTicker(id, m)
		return
	}
	d := h.duration()
	if m.kind == modelSchedule {
		// Keep schedules reset into the past within a few wheel spans, so
		// that scheduleRuns' estimate of a step's work (one run per tick at
		// most) stays close; TestScheduleResetFarIntoThePast covers the rest.
		d = max(d, -time.Duration(3*h.size*h.tick))
	}
	want := m.active || (m.kind == modelChan && m.buffered)
	h.note("#%d(%v).Reset(%d) want %v", id, m.kind, d, want)
	m.buffered = false
	h.arm(m, d)
	if got := m.timer.Reset(d); got != want {
		h.t.Fatalf("%v: Reset returned %v", h, got)
	}
	h.armed(m, d)
}

func (h *harness) resetTicker(id int, m *modelTimer) {
	d := h.tickerPeriod()
	if d <= 0 {
		h.note("#%d(ticker).Reset(%d) want panic", id, d)
		require.Panics(h.t, func() { m.ticker.Reset(d) }, "%v", h)
		return
	}
	h.note("#%d(ticker).Reset(%d)", id, d)
	h.armTicker(m, d)
	m.ticker.Reset(d)
	if len(m.ticker.C) != 0 {
		h.t.Fatalf("%v: a tick on C after Reset returned", h)
	}
}

func (h *harness) receive() {
	id, m := h.pick()
	if !m.hasC() {
		return
	}
	h.note("<-#%d.C want value %v", id, m.buffered)
	select {
	case v := <-m.c():
		require.True(h.t, m.buffered, "%v: unexpected value on C", h)
		require.Equal(h.t, m.value, int64(v.Sub(h.epoch)), "%v: value on C", h)
		m.buffered = false
	default:
		require.False(h.t, m.buffered, "%v: no value on C", h)
	}
}

// duration draws a timer duration from a mix that covers every boundary.
func (h *harness) duration() time.Duration {
	tick, span := h.tick, h.tick*h.size
	switch h.c.intn(24) {
	case 0:
		return -time.Duration(1 + h.c.intn(3*span))
	case 1:
		return [...]time.Duration{-1, math.MinInt64, -time.Duration(tick)}[h.c.intn(3)]
	case 2:
		return 0
	case 3, 4:
		return time.Duration(1 + h.c.intn(max(tick-1, 1))) // within one tick
	case 5, 6:
		return time.Duration(tick * (1 + h.c.intn(h.size*h.size))) // on a tick boundary
	case 7:
		return time.Duration(tick*(1+h.c.intn(h.size*h.size)) + h.c.intn(3) - 1) // next to one
	case 8, 9, 10, 11, 12, 13:
		return time.Duration(1 + h.c.intn(4*span))
	case 14, 15, 16, 17, 18:
		limit := span
		for range 1 + h.c.intn(5) {
			if limit > 1<<44/h.size {
				break
			}
			limit *= h.size
		}
		return time.Duration(1 + h.c.intn(limit)) // up to many wheel spans
	case 19, 20:
		return time.Duration(1 + h.c.intn(1<<46))
	case 21:
		return [...]time.Duration{math.MaxInt64, math.MaxInt64 - 1, 1 << 62, math.MaxInt64 - time.Duration(h.elapsed)}[h.c.intn(4)]
	default:
		return time.Duration(tick) // exactly one tick
	}
}

func (h *harness) period() int64 {
	tick := h.tick
	switch h.c.intn(5) {
	case 0:
		return 1 + h.c.intn(max(tick-1, 1)) // several runs per tick: caught up one per tick
	case 1:
		return tick
	case 2:
		return tick * (1 + h.c.intn(2*h.size))
	default:
		return 1 + h.c.intn(h.size*h.size*tick)
	}
}

// advanceBy draws how far to move the clock.
func (h *harness) advanceBy() int64 {
	tick, span := h.tick, h.tick*h.size
	switch h.c.intn(16) {
	case 0:
		return 0
	case 1:
		return 1
	case 2:
		return h.c.intn(tick)
	case 3:
		return tick
	case 4, 5, 6, 7:
		return h.c.intn(2*span) + 1
	case 8, 9:
		return h.c.intn(span*h.size) + 1
	case 10:
		limit := span * h.size
		for range h.c.intn(4) {
			if limit > 1<<40/h.size {
				break
			}
			limit *= h.size
		}
		return h.c.intn(limit) + 1 // a big jump across levels
	default:
		// To a due timer's exact boundary, or just short of it.
		if len(h.timers) == 0 {
			return tick
		}
		_, m := h.pick()
		if !m.active {
			return tick
		}
		edge := m.due*h.tick - h.elapsed
		if m.due > math.MaxInt64/h.tick || edge > 1<<50 {
			return span
		}
		return max(edge-h.c.intn(2), 0)
	}
}

// scheduleRuns counts the runs a step at tick T would fire, up to limit.
func (h *harness) scheduleRuns(T, limit int64) int64 {
	var n int64
	for _, m := range h.timers {
		if m.kind != modelSchedule || !m.active || m.due > T {
			continue
		}
		due, next := m.due, m.target
		left := int64(math.MaxInt64)
		if m.finite {
			left = int64(m.left)
		}
		for due <= T && n <= limit {
			n++
			if left == 0 {
				break
			}
			left--
			next += m.period
			due = max(ceilTick(max(next, 1), h.tick), due+1)
		}
	}
	return n
}

func (h *harness) advance(step bool) {
	dt := h.advanceBy()
	if dt > 1<<58-h.elapsed {
		dt = 0
	}
	for dt > h.tick && h.scheduleRuns((h.elapsed+dt)/h.tick, h.scheduleRunsBudget) > h.scheduleRunsBudget {
		dt /= 2
	}
	h.note("Advance(%d) step=%v", dt, step)
	h.clock.Advance(time.Duration(dt))
	h.elapsed += dt
	if step {
		h.step()
	}
}

// step runs the wheel's step and checks it fired exactly what the model says.
func (h *harness) step() {
	h.events = h.events[:0]
	h.tw.step()
	T := h.elapsed / h.tick
	want := map[int]int{}
	for id, m := range h.timers {
		for !h.stopped && m.active && m.due <= T {
			if h.elapsed < m.target {
				h.t.Fatalf("%v: the model fires #%d early, before %d", h, id, m.target)
			}
			h.fired++
			switch m.kind {
			case modelFunc:
				m.active = false
				h.pending--
				want[id]++
			case modelChan:
				m.active = false
				h.pending--
				m.buffered, m.value = true, h.elapsed
			case modelSchedule:
				want[id]++
				if !h.nextRun(m) {
					m.active = false
					h.pending--
				}
			case modelTicker:
				h.tickerFired(m) // stays active, due after T
			}
		}
	}
	got := map[int]int{}
	for _, id := range h.events {
		got[id]++
	}
	if len(want) != len(got) || func() bool {
		for id, n := range want {
			if got[id] != n {
				return true
			}
		}
		return false
	}() {
		require.Equal(h.t, want, got, "%v: callbacks run by step (timer id -> runs)", h)
	}
	for id, m := range h.timers {
		if m.hasC() && m.buffered != (len(m.c()) == 1) {
			h.t.Fatalf("%v: %v #%d has a value on C: %v, want %v", h, m.kind, id, len(m.c()) == 1, m.buffered)
		}
	}
	if ct := h.tw.maxCurrentTick(); ct > T {
		h.t.Fatalf("%v: currentTick %d ran ahead of the clock", h, ct)
	}
	h.checkStats()
}

func (h *harness) checkStats() {
	s := h.tw.Stats()
	want := Stats{
		Pending: h.pending,
		Fired:   h.fired,
		Stopped: h.stops,
		Dropped: h.dropped,
		Wakeups: 0, // no poller
		Levels:  s.Levels,
	}
	if s != want {
		require.Equal(h.t, want, s, "%v", h)
	}
	h.levelsSeen = max(h.levelsSeen, s.Levels)
	if s.Levels > h.maxLevels || (h.stopped && s.Levels != 0) {
		h.t.Fatalf("%v: %d levels (stopped %v)", h, s.Levels, h.stopped)
	}
}

func (h *harness) stopWheel() {
	h.note("wheel.Stop()")
	h.tw.Stop()
	if !h.stopped {
		h.dropped += uint64(h.pending)
		h.pending = 0
		h.stopped = true
	}
	require.Zero(h.t, h.tw.Len(), "%v", h)
	h.checkStats()
}

// op performs one random operation.
func (h *harness) op() {
	h.ops++
	canAdd := len(h.timers) < h.maxTimers
	switch r := h.c.intn(100); {
	case len(h.timers) == 0 || (r < 18 && canAdd):
		h.add(modelFunc)
	case r < 25 && canAdd:
		h.add(modelChan)
	case r < 27 && canAdd:
		h.add(modelSchedule)
	case r < 30 && canAdd:
		h.add(modelTicker)
	case r < 42:
		h.stop()
	case r < 60:
		h.reset()
	case r < 66:
		h.receive()
	case r < 88:
		h.advance(true)
	case r < 90:
		h.note("step()")
		h.step()
	case r < 92:
		h.advance(false) // the clock moves; the next step catches up
	case r == 92 && h.c.intn(20) == 0:
		h.stopWheel()
	default:
		h.reset()
	}
	if n := h.tw.Len(); n != h.pending {
		h.t.Fatalf("%v: Len() = %d, want %d", h, n, h.pending)
	}
}

// run performs n operations (fewer if the input runs out), stopping the wheel
// for the last tenth of them, and then checks what a stopped wheel owes.
func (h *harness) run(n int) {
	for i := 0; i < n && !h.c.done(); i++ {
		if i == n-n/10 {
			h.step()
			h.stopWheel()
		}
		h.op()
	}
	h.step()
	h.stopWheel()
	h.advance(true)
	// Every timer still pending reports true once, then false.
	for id, m := range h.timers {
		if m.kind == modelTicker {
			h.stopTicker(m)
			m.ticker.Stop()
			m.ticker.Stop()
			require.Zero(h.t, len(m.ticker.C), "%v: a tick on C after the final Stop of #%d", h, id)
			continue
		}
		want := m.active || (m.kind == modelChan && m.buffered)
		require.Equal(h.t, want, m.timer.Stop(), "%v: final Stop of #%d", h, id)
		require.False(h.t, m.timer.Stop(), "%v: second Stop of #%d", h, id)
		if m.active {
			h.stops++
			m.active = false
		}
	}
	h.checkStats()
}

func envInt(t testing.TB, name string, def uint64) uint64 {
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	v, err := strconv.ParseUint(s, 10, 64)
	require.NoError(t, err, "%s", name)
	return v
}

// TestModel runs seeded random operation sequences against the reference.
// TIMINGWHEEL_SEED reproduces a run; TIMINGWHEEL_MODEL_OPS scales it.
func TestModel(t *testing.T) {
	seed := envInt(t, "TIMINGWHEEL_SEED", uint64(time.Now().UnixNano()))
	total := int(envInt(t, "TIMINGWHEEL_MODEL_OPS", 120_000))
	if testing.Short() {
		total /= 10
	}
	t.Logf("seed %d (TIMINGWHEEL_SEED=%d reproduces it)", seed, seed)
	const opsPerRun = 1500
	var ops, immediate, ticksSent, ticksLost int
	var fired uint64
	levels := map[modelConfig]int{}
	for run := 0; ops < total; run++ {
		cfg := modelConfigs[run%len(modelConfigs)]
		desc := fmt.Sprintf("TIMINGWHEEL_SEED=%d run %d", seed, run)
		h := newHarness(t, randChooser{rand.New(rand.NewPCG(seed, uint64(run)))}, cfg, desc)
		h.run(opsPerRun)
		ops += h.ops
		immediate += h.immediateChecked
		ticksSent += h.ticksSent
		ticksLost += h.ticksLost
		fired += h.fired
		levels[cfg] = max(levels[cfg], h.levelsSeen)
	}
	t.Logf("%d operations, %d expirations, %d immediate (d <= 0) armings, tickers' ticks: %d sent, %d dropped", ops, fired, immediate, ticksSent, ticksLost)
	if !testing.Short() && (ticksSent == 0 || ticksLost == 0) {
		t.Errorf("the run checked no tickers' ticks sent (%d) or none dropped (%d)", ticksSent, ticksLost)
	}
	for _, cfg := range modelConfigs {
		t.Logf("tick %v, size %d: up to %d levels", cfg.tick, cfg.size, levels[cfg])
	}
}
