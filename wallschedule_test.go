package timingwheel

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Schedules on the wall clock (WallClock), driven by a FakeClock whose wall
// clock steps apart from its monotonic one.

// dailyAt is a cron-like Scheduler: every day at hour:min in loc, or in the
// location of the time it is given if loc is nil (as a cron spec without a
// time zone runs in the location it is handed).
type dailyAt struct {
	hour, min int
	loc       *time.Location
}

func (d dailyAt) Next(prev time.Time) time.Time {
	if d.loc != nil {
		prev = prev.In(d.loc)
	}
	t := time.Date(prev.Year(), prev.Month(), prev.Day(), d.hour, d.min, 0, 0, prev.Location())
	if !t.After(prev) {
		t = time.Date(prev.Year(), prev.Month(), prev.Day()+1, d.hour, d.min, 0, 0, prev.Location())
	}
	return t
}

// wallWatch wraps a Scheduler to check, at every Next call, that the wall
// clock has reached prev: the wheel calls Next(prev) when the run scheduled
// at prev fires (or with the wall clock's reading itself), so this is "never
// early by the wall clock". It records the locations Next was handed.
type wallWatch struct {
	t     *testing.T
	clock *FakeClock
	s     Scheduler
	mu    sync.Mutex
	locs  []*time.Location
}

func (w *wallWatch) Next(prev time.Time) time.Time {
	wall := w.clock.Wall()
	if wall.Before(prev) {
		w.t.Errorf("a run scheduled at %v fired at %v by the wall clock: early", prev, wall)
	}
	w.mu.Lock()
	w.locs = append(w.locs, prev.Location())
	w.mu.Unlock()
	return w.s.Next(prev)
}

// wallRuns records the wall clock at each run.
type wallRuns struct {
	clock *FakeClock
	at    []time.Time
}

func (r *wallRuns) f() { r.at = append(r.at, r.clock.Wall()) }

// passMinutes moves the monotonic clock (and with it the wall clock) by d,
// a minute at a time, stepping the wheel after each: time passing, as far as
// a wall-clock schedule's re-checks can tell.
func passMinutes(tw *TimingWheel, clock *FakeClock, d time.Duration) {
	for ; d > 0; d -= time.Minute {
		clock.Advance(min(d, time.Minute))
		tw.step()
	}
}

func newWallWheel(t *testing.T, start time.Time) (*TimingWheel, *FakeClock) {
	t.Helper()
	clock := NewFakeClock(start)
	tw, err := newManual(time.Second, 64, WithClock(clock), WithInlineCallbacks())
	require.NoError(t, err)
	t.Cleanup(tw.Stop)
	return tw, clock
}

func at(day, hour, min int) time.Time { return time.Date(2026, 1, day, hour, min, 0, 0, time.UTC) }

func TestWallScheduleSteps(t *testing.T) {
	for _, tc := range []struct {
		name string
		// step is made when the wall clock reads 02:30 on the 3rd, with the
		// schedule's run at 03:00 pending.
		step    time.Duration
		advance time.Duration // monotonic time passing with the step (a resume: small)
		want    []time.Time   // runs by the wall clock, until 04:00 on the 5th by it
	}{
		{"no step", 0, 0, []time.Time{at(3, 3, 0), at(4, 3, 0), at(5, 3, 0)}},
		{"back an hour: the run waits for 03:00 by the wall clock", -time.Hour, 0,
			[]time.Time{at(3, 3, 0), at(4, 3, 0), at(5, 3, 0)}},
		{"forward two hours: one run within a minute, then on time", 2 * time.Hour, 0,
			[]time.Time{at(3, 4, 31), at(4, 3, 0), at(5, 3, 0)}},
		{"resume after two days' suspend: one run, not two", 48 * time.Hour, time.Second,
			[]time.Time{at(5, 2, 31), at(5, 3, 0)}},
		{"forward to a minute short of the run: on time", 29 * time.Minute, 0,
			[]time.Time{at(3, 3, 0), at(4, 3, 0), at(5, 3, 0)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw, clock := newWallWheel(t, time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
			r := &wallRuns{clock: clock}
			tw.ScheduleFunc(&wallWatch{t: t, clock: clock, s: dailyAt{hour: 3}}, r.f, WallClock())
			passMinutes(tw, clock, at(3, 2, 30).Sub(clock.Wall()))
			require.Empty(t, r.at)
			clock.StepWall(tc.step - tc.advance)
			clock.Advance(tc.advance)
			tw.step()
			passMinutes(tw, clock, at(5, 4, 0).Sub(clock.Wall()))
			require.Equal(t, tc.want, r.at)
			require.Equal(t, 1, tw.Len(), "the schedule stays pending")
			require.Equal(t, uint64(len(tc.want)), tw.Stats().Fired, "re-checks are not expirations")
		})
	}
}

// Every keeps its monotonic phase whatever the wall clock does, also with a
// wall-clock schedule on the same wheel.
func TestEveryIgnoresWallSteps(t *testing.T) {
	tw, clock := newWallWheel(t, testEpoch)
	r := &runTimes{clock: clock}
	tw.ScheduleFunc(Every(10*time.Minute), r.f)
	tw.ScheduleFunc(dailyAt{hour: 3}, func() {}, WallClock())
	for i, step := range []time.Duration{-time.Hour, 3 * time.Hour, 24 * time.Hour, -48 * time.Hour} {
		passMinutes(tw, clock, 7*time.Minute)
		clock.StepWall(step)
		require.Len(t, r.at, (i+1)*7/10, "after %d steps", i+1)
	}
	passMinutes(tw, clock, 32*time.Minute)
	want := []time.Duration{10 * time.Minute, 20 * time.Minute, 30 * time.Minute, 40 * time.Minute, 50 * time.Minute, 60 * time.Minute}
	require.Equal(t, want, r.at, "by the monotonic clock, Now")
}

// The times handed to Next are in the clock's location (here a FakeClock
// started in a +05:30 zone), so a Scheduler that keeps the location it is
// handed, as a "Local" cron spec does, runs at the local hour; one that
// converts to its own zone runs at that zone's hour on any clock.
func TestWallScheduleLocation(t *testing.T) {
	zone := time.FixedZone("X", 5*3600+30*60)
	start := time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC) // 17:30 in X
	for _, tc := range []struct {
		name  string
		start time.Time
		s     dailyAt
	}{
		{"clock in X, spec in the clock's zone", start.In(zone), dailyAt{hour: 3}},
		{"clock in UTC, spec in X", start, dailyAt{hour: 3, loc: zone}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tw, clock := newWallWheel(t, tc.start)
			r := &wallRuns{clock: clock}
			w := &wallWatch{t: t, clock: clock, s: tc.s}
			tw.ScheduleFunc(w, r.f, WallClock())
			passMinutes(tw, clock, 36*time.Hour)
			require.Len(t, r.at, 2)
			for _, run := range r.at {
				local := run.In(zone)
				require.Equal(t, []int{3, 0, 0}, []int{local.Hour(), local.Minute(), local.Second()}, "run at %v", local)
			}
			require.Equal(t, time.Date(2026, 1, 2, 21, 30, 0, 0, time.UTC), r.at[0].UTC())
			require.Equal(t, tc.start.Location(), w.locs[0], "the first Next is handed the clock's reading, in its location")
		})
	}
}

// Random steps of the wall clock, back and forth, with time passing: a run
// never fires before its time by the wall clock (wallWatch), each run is
// counted, and once the wall clock stops stepping the schedule is caught up
// within wallRecheck.
func TestWallScheduleRandomSteps(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	tw, clock := newWallWheel(t, testEpoch)
	r := &wallRuns{clock: clock}
	every7 := everyWall(7 * time.Minute)
	tm := tw.ScheduleFunc(&wallWatch{t: t, clock: clock, s: every7}, r.f, WallClock())
	for range 2000 {
		switch rng.IntN(3) {
		case 0:
			clock.StepWall(time.Duration(rng.Int64N(int64(4*time.Hour))) - 2*time.Hour)
		default:
			clock.Advance(time.Duration(rng.Int64N(int64(10 * time.Minute))))
		}
		tw.step()
	}
	require.Equal(t, uint64(len(r.at)), tw.Stats().Fired)
	// Once the wall clock has passed the pending run (far ahead after steps
	// back), the schedule runs once a period.
	sh := tm.owner.shard
	sh.mu.Lock()
	next := tm.owner.schedule.next
	sh.mu.Unlock()
	passMinutes(tw, clock, next.Sub(clock.Wall())+wallRecheck)
	n := len(r.at)
	passMinutes(tw, clock, 70*time.Minute)
	// Ten runs, give or take one at each end by the rounding to the tick.
	require.InDelta(t, 10, len(r.at)-n, 1, "a run a period in steady time")
}

// everyWall is a Scheduler of wall-clock times aligned to multiples of d,
// as "*/7 * * * *" is to minutes.
type everyWall time.Duration

func (e everyWall) Next(prev time.Time) time.Time {
	return prev.Truncate(time.Duration(e)).Add(time.Duration(e))
}

// Reset of a wall-clock schedule moves its next run to d from now by the
// wall clock, and a long d is still re-checked.
func TestWallScheduleReset(t *testing.T) {
	tw, clock := newWallWheel(t, time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC))
	r := &wallRuns{clock: clock}
	tm := tw.ScheduleFunc(dailyAt{hour: 3}, r.f, WallClock())
	require.True(t, tm.Reset(2*time.Hour)) // 02:00, then daily at 03:00
	passMinutes(tw, clock, time.Hour)
	clock.StepWall(-30 * time.Minute) // 00:30 by the wall clock
	passMinutes(tw, clock, 89*time.Minute)
	require.Empty(t, r.at, "not before 02:00 by the wall clock")
	passMinutes(tw, clock, 91*time.Minute) // 03:30
	require.Equal(t, []time.Time{at(2, 2, 0), at(2, 3, 0)}, r.at)
}

func TestScheduleNeverRunsPanics(t *testing.T) {
	tw, _ := newWallWheel(t, testEpoch)
	none := 0
	for _, opts := range [][]ScheduleOption{nil, {WallClock()}} {
		require.PanicsWithValue(t,
			"timingwheel: ScheduleFunc called with a Scheduler that never runs: its first Next is the zero Time",
			func() { tw.ScheduleFunc(countdown{left: &none, period: time.Second}, func() {}, opts...) })
	}
	require.PanicsWithValue(t, "timingwheel: ScheduleFunc called with nil ScheduleOption",
		func() { tw.ScheduleFunc(Every(time.Second), func() {}, nil) })
	require.Zero(t, tw.Len())
}

// On the system clock: Next is handed time.Now's wall reading in time.Local,
// with no monotonic reading, and a run comes no earlier than its time by the
// wall clock (which here does not step).
func TestWallScheduleSystemClock(t *testing.T) {
	tw, err := New(time.Millisecond, 32)
	require.NoError(t, err)
	defer tw.Stop()
	const n = 50
	var wg sync.WaitGroup
	wg.Add(n)
	for i := range n {
		once := &onceAt{d: time.Duration(i) * time.Millisecond}
		before := time.Now().Round(0)
		tw.ScheduleFunc(once, func() {
			defer wg.Done()
			now := time.Now()
			if now.Before(once.at) {
				t.Errorf("run at %v, before its time %v by the wall clock", now, once.at)
			}
		}, WallClock())
		require.Equal(t, time.Local, once.handed.Location())
		require.Equal(t, once.handed, once.handed.Round(0), "no monotonic reading")
		require.False(t, once.handed.Before(before))
	}
	waitWithin(t, &wg, "every run")
}

// onceAt is a Scheduler of one run, d after the time it is first handed.
type onceAt struct {
	d          time.Duration
	handed, at time.Time // set by the first Next, under the wheel's lock
}

func (o *onceAt) Next(prev time.Time) time.Time {
	if !o.at.IsZero() {
		return time.Time{}
	}
	o.handed, o.at = prev, prev.Add(o.d)
	return o.at
}
