package durable

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// Periodic tasks. Each time of a schedule becomes an ordinary task, its
// occurrence, under the key "periodic:<name>@<Unix ms>" and due at that time,
// added with Add: so it is delivered by any Run on the namespace, at least
// once and never early, like every task, and Add's idempotence means two
// replicas adding the same time store one task.
//
// Where the schedule stands is kept in the store, so that every replica
// agrees and none needs to be running for it to survive: the registry
// (Store.Periodic; on Redis the HASH {ns.periodic}:sched in a slot of its
// own, driven by lua/periodic.lua) maps each name to its pointer, the latest occurrence
// added. Each replica's loop waits, by the store's clock, until the pointer's
// occurrence is due, then adds the next one and only then moves the pointer
// to it (a compare-and-set that never goes backwards). A replica that dies
// between the two leaves an occurrence that the next replica adds again: a
// no-op, since a time still ahead cannot have run. So one occurrence always
// waits in the store ahead of time (enqueue ahead), and a schedule keeps firing
// as long as any Run delivers tasks and any replica's loop runs about once
// per period. A loop that finds the next time already past (it was late, or
// every replica was down) cannot know whether that time ran: it moves the
// pointer first, and only the replica whose move succeeded adds the time.

// periodicPrefix starts every occurrence's task key; a namespace's own keys
// should not start with it.
const periodicPrefix = "periodic:"

// registryPoll caps a replica's wait between two readings of the registry,
// so that a removal is noticed within it: a second, one read a second per
// replica and schedule.
const registryPoll = time.Second

// MaxPeriodicNameLen caps a schedule's name, so that its occurrences' keys
// stay within MaxKeyLen.
const MaxPeriodicNameLen = 512

// Errors of periodic schedules, for errors.Is.
var (
	// ErrPeriodicName reports a schedule name that is empty, too long, not
	// UTF-8 or holds a NUL byte.
	ErrPeriodicName = errors.New("durable: bad periodic name")
	// ErrPeriodicRemoved is returned by Periodic when the schedule was
	// removed with RemovePeriodic while it ran.
	ErrPeriodicRemoved = errors.New("durable: periodic schedule removed")
	// ErrPeriodicStalled goes to Options.OnError (slog.Default at warning
	// level when it is nil, as Run's errors) when a replica's step to
	// add a time took until that time: another replica may have found the
	// pointer behind and added the time again after it ran, so without
	// Options.Retention it may run twice. The error names the time's key.
	ErrPeriodicStalled = errors.New("durable: periodic replica stalled past the time it was adding")
	// ErrScheduleEnded is returned by Periodic when the Schedule has no time
	// after the latest occurrence: Next returned the zero time, a time not
	// after its argument, or one past year 285,000.
	ErrScheduleEnded = errors.New("durable: schedule has no next time")
)

// A Schedule gives the times of a periodic task: Next returns the first time
// strictly after t, or the zero time if there is none. Next sees t in UTC,
// with no monotonic reading. robfig/cron's cron.Schedule satisfies it; for a
// cron spec in local hours, parse it with a time zone ("CRON_TZ=Europe/Paris
// 0 9 * * *") or wrap the Schedule in a ScheduleFunc that calls it with
// t.In(loc).
type Schedule interface {
	Next(t time.Time) time.Time
}

// ScheduleFunc makes a func a Schedule.
type ScheduleFunc func(t time.Time) time.Time

// Next returns f(t).
func (f ScheduleFunc) Next(t time.Time) time.Time { return f(t) }

// Every returns the Schedule of the multiples of d since the zero time, as
// time.Truncate counts them: the times do not depend on when a replica
// starts, and for a d that divides a day they fall on the same clock times
// every UTC day (Every(time.Hour) fires on the hour). Every panics if d is
// under a millisecond, the resolution of due times.
func Every(d time.Duration) Schedule {
	if d < time.Millisecond {
		panic(fmt.Sprintf("durable: Every(%v): the interval must be at least 1ms", d))
	}
	return ScheduleFunc(func(t time.Time) time.Time { return t.Truncate(d).Add(d) })
}

// Periodic keeps the schedule s registered under name running until ctx ends
// (it then returns nil) or the schedule is removed (it returns an error
// wrapping ErrPeriodicRemoved). Each time of s becomes one task under the
// key "periodic:<name>@<Unix ms of the time>" with payload and opts, due at
// that time by the store's clock, delivered by any Run on the namespace like
// any task: at least once and never early. Periodic only adds tasks; it needs
// a Run somewhere to deliver them.
//
// Any number of replicas, in any number of processes, may call Periodic with
// the same name, schedule and payload: the schedule's position is kept in
// the store, so together they add each time once, and a replica that starts
// later, or after every replica was stopped, carries on where they left off.
// The first registration of a name starts at the first time of s after
// the store's clock; later ones join it. Replicas that disagree on s or payload
// get, for each step, the choice of whichever added first.
//
// Each time is added about one period ahead, as soon as the time before it
// is due, so it waits in the store even while no replica runs. A time that was
// not added in time because no replica's loop ran for a while is added late,
// due at once, if it passed less than 2s ago (a stalled replica); times
// that passed longer ago (every replica was down) run once, not once each:
// the latest of them is added, and the schedule carries on from there.
//
// A time never runs twice while its task exists (scheduled, in flight or
// dead) or is retained (Options.Retention). Without retention a time can run
// twice only when a replica stalls for about a whole period between reading
// the schedule and adding the time, or between adding it and moving the
// pointer (or dies there), and the time has run and finished meanwhile; a
// replica that stalls so reports an error wrapping ErrPeriodicStalled to
// Options.OnError (or slog.Default at warning level when it is nil).
//
// Cancel of an occurrence's key skips that one time. Pause does not stop a
// schedule: its times keep being added and run at Resume; remove it instead.
// Each replica's loop makes about one registry read a second and three
// store calls per time (read, Add, advance), all but one of the replicas'
// Adds being no-ops.
//
// The name must be 1..MaxPeriodicNameLen bytes of UTF-8 without NUL, or
// Periodic returns an error wrapping ErrPeriodicName; a payload or option
// Add would refuse makes it return Add's error (ErrPayload, ErrTaskOption)
// at once. It panics if s is nil. Store errors go to Options.OnError, or to
// slog.Default at warning level with op "periodic" when it is nil, and are
// retried.
func (q *Queue) Periodic(ctx context.Context, name string, s Schedule, payload []byte, opts ...TaskOption) error {
	if s == nil {
		panic("durable: Periodic with nil Schedule")
	}
	if err := checkPeriodicName(name); err != nil {
		return err
	}
	if err := checkPayload(payload); err != nil {
		return err
	}
	if _, err := policyOf(opts); err != nil {
		return err
	}
	p := &periodic{q: q, name: name, s: s, payload: payload, opts: opts}
	return p.run(ctx)
}

// RemovePeriodic deletes the schedule registered under name and cancels its
// pending occurrence, and reports whether there was one. That occurrence
// never ran, so it is forgotten, not retained (Options.Retention): a later
// registration of the name adds its time again. The replicas running
// it stop adding and return ErrPeriodicRemoved; an occurrence that was
// already due may still run once. A later Periodic with the name registers
// it anew. It returns an error wrapping ErrPeriodicName for a bad name.
func (q *Queue) RemovePeriodic(ctx context.Context, name string) (bool, error) {
	if err := checkPeriodicName(name); err != nil {
		return false, err
	}
	st, err := q.periodicOp(ctx, PeriodicRemove, name, 0, 0)
	if err != nil || st.status < 0 {
		return false, err
	}
	// A due pointer's occurrence may be in flight: it is left to finish. A
	// loop that added the next one and then finds the entry gone cancels
	// that one itself.
	if st.pointer > st.now {
		key := occurrenceKey(name, st.pointer)
		if _, err := q.cancel(ctx, key, 0); err != nil {
			return true, fmt.Errorf("durable: periodic %q removed, but its occurrence %q may still run: %w", name, key, err)
		}
	}
	return true, nil
}

func occurrenceKey(name string, ms int64) string {
	return periodicPrefix + name + "@" + strconv.FormatInt(ms, 10)
}

// A periodicState is one reply of Store.Periodic.
type periodicState struct {
	status  int64 // 1 done, 0 not done, -1 no such schedule
	pointer int64 // Unix ms of the latest occurrence added
	now     int64 // the store's time, ms
}

func (q *Queue) periodicOp(ctx context.Context, op PeriodicOp, name string, from, to int64) (periodicState, error) {
	st, err := q.store.Periodic(ctx, op, name, from, to)
	if err != nil {
		return periodicState{}, err
	}
	return periodicState{status: st.Status, pointer: st.Pointer, now: st.Now}, nil
}

// periodic is one replica's loop for one schedule.
type periodic struct {
	q       *Queue
	name    string
	s       Schedule
	payload []byte
	opts    []TaskOption
}

func (p *periodic) run(ctx context.Context) error {
	op := PeriodicRegister
	for {
		st, err := p.q.periodicOp(ctx, op, p.name, 0, 0)
		readAt := time.Now()
		var wait time.Duration
		if err == nil {
			op = PeriodicRead
			wait, err = p.step(ctx, st, readAt)
		}
		if errors.Is(err, ErrPeriodicRemoved) || errors.Is(err, ErrScheduleEnded) {
			return err
		}
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			p.q.report("periodic", err)
			wait = errorSleep
		}
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
			case <-t.C:
			}
			t.Stop()
		}
	}
}

// step acts on one reading of the registry, taken at readAt, and returns how
// long to wait before the next reading.
func (p *periodic) step(ctx context.Context, st periodicState, readAt time.Time) (time.Duration, error) {
	if st.status < 0 {
		return 0, fmt.Errorf("%w: %q", ErrPeriodicRemoved, p.name)
	}
	if st.pointer > st.now {
		// The pointer's occurrence waits in Redis; wake when it is due. The
		// cap lets a removal be noticed within registryPoll.
		return min(time.Duration(st.pointer-st.now)*time.Millisecond, registryPoll), nil
	}
	next, err := p.next(st.pointer)
	if err != nil {
		return 0, err
	}
	switch {
	case next > st.now:
		return 0, p.addThenAdvance(ctx, st, next, readAt)
	case st.now-next < catchUpGrace.Milliseconds():
		// Just missed, by a loaded or restarting replica: run it late.
		return 0, p.advanceThenAdd(ctx, st, next)
	default:
		// Missed long ago (every replica was down): run the missed times
		// once, as the latest of them.
		return 0, p.advanceThenAdd(ctx, st, p.catchUp(next, st.now))
	}
}

// catchUpGrace is how late a time may be found and still run on its own:
// longer than a replica stalls on a loaded machine (a replica of a test on a
// 2-core machine at load 12 once missed 1.8s), shorter than a restart of
// every replica usually takes. Times missed by longer are run once together.
const catchUpGrace = 2 * time.Second

// addThenAdvance adds the occurrence at next, still in the future, then
// moves the pointer to it. A future time cannot have run yet, so adding it
// again, as a replica does that read the pointer before another moved it,
// is a no-op; and a replica that dies between add and advance loses
// nothing, the next one adds it again.
func (p *periodic) addThenAdvance(ctx context.Context, st periodicState, next int64, readAt time.Time) error {
	// The time may have come (and its task run and gone) since the reading,
	// if this replica stalled: read again rather than add it once more.
	if time.Since(readAt) >= time.Duration(next-st.now)*time.Millisecond {
		return nil
	}
	// Finish the step even if ctx ends meanwhile, so that a stopping
	// replica leaves the pointer naming what it added.
	fin, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalTimeout)
	defer cancel()
	key := occurrenceKey(p.name, next)
	added, err := p.q.Add(fin, key, p.payload, time.UnixMilli(next), p.opts...)
	if err != nil {
		return err
	}
	r, err := p.q.periodicOp(fin, PeriodicAdvance, p.name, st.pointer, next)
	if err != nil {
		return err
	}
	// Take back an occurrence that no pointer names: the schedule was
	// removed meanwhile, or a replica with another schedule moved the
	// pointer elsewhere, short of next. (If it moved to next, our Add was a
	// no-op.) A pointer past next means this replica stalled past the time
	// while the others moved on, their Adds of it no-ops: ours is the time's
	// only task, and may be running, waiting for a retry or retained. Taking
	// it back would cancel that run, or end its uniqueness window.
	if added && (r.status < 0 || r.status == 0 && r.pointer < next) {
		// Forgotten, not retained, as RemovePeriodic's: a time that no
		// pointer names may be added again by a new registration.
		if _, err := p.q.cancel(fin, key, 0); err != nil {
			return err
		}
	}
	if r.status < 0 {
		return fmt.Errorf("%w: %q", ErrPeriodicRemoved, p.name)
	}
	// Every way a time runs twice passes here: an Add of a future time that
	// landed after the time, or one whose pointer move came too late to stop
	// another replica catching up on it. Say so, never silently.
	if r.now >= next {
		p.q.report("periodic", fmt.Errorf("%w: %q, %dms late", ErrPeriodicStalled, key, r.now-next))
	}
	return nil
}

// advanceThenAdd catches up: it moves the pointer to at, a time already due,
// and only if it did so adds the occurrence. Such a time may already have
// run, and replicas catching up at once may pick different times, so only
// the replica that moved the pointer adds it. If that replica dies in
// between, the catch-up run is lost; an Add that fails is reported.
func (p *periodic) advanceThenAdd(ctx context.Context, st periodicState, at int64) error {
	r, err := p.q.periodicOp(ctx, PeriodicAdvance, p.name, st.pointer, at)
	switch {
	case err != nil:
		return err
	case r.status < 0:
		return fmt.Errorf("%w: %q", ErrPeriodicRemoved, p.name)
	case r.status == 0:
		return nil // another replica moved it: read again
	}
	// Nobody else will add this time: finish the Add even if ctx ends now.
	addCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalTimeout)
	defer cancel()
	key := occurrenceKey(p.name, at)
	if _, err := p.q.Add(addCtx, key, p.payload, time.UnixMilli(at), p.opts...); err != nil {
		return fmt.Errorf("durable: periodic %q: catch-up run %q lost: %w", p.name, key, err)
	}
	return nil
}

// next is the schedule's first time after the Unix ms after, in Unix ms
// rounded up (never early).
func (p *periodic) next(after int64) (int64, error) {
	const maxExact = 1 << 53 // as unixMilliCeil
	t := p.s.Next(time.UnixMilli(after).UTC())
	ms := unixMilliCeil(t)
	if t.IsZero() || ms <= after || ms >= maxExact {
		return 0, fmt.Errorf("%w: %q after %v (Next gave %v)", ErrScheduleEnded, p.name, time.UnixMilli(after).UTC(), t)
	}
	return ms, nil
}

// catchUpWalk bounds the times catchUp steps through one by one: about
// 100 µs of Next calls for Every, more for a cron spec.
const catchUpWalk = 1024

// catchUp returns the latest time of the schedule at or before now, given
// first, one such time. Far behind (say a 200ms schedule after a day down),
// it stops stepping and probes back from now instead, in spans doubling
// from the schedule's last step, for a time close to now.
func (p *periodic) catchUp(first, now int64) int64 {
	t, step, done := p.walk(first, now)
	if done {
		return t
	}
	for span := step; span > 0 && now-span > t; span *= 2 {
		if c, err := p.next(now - span); err == nil && c > t && c <= now {
			t, _, _ = p.walk(c, now)
			return t
		}
	}
	return t
}

// walk steps from t, a time at or before now, to the latest time at or
// before now, at most catchUpWalk steps; done reports that it got there.
// step is the length of the last step.
func (p *periodic) walk(t, now int64) (last, step int64, done bool) {
	for range catchUpWalk {
		n, err := p.next(t)
		if err != nil || n > now {
			return t, step, true
		}
		t, step = n, n-t
	}
	return t, step, false
}
