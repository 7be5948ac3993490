// Package timingwheel is a hierarchical timing wheel for Go: timers with the
// API of package time (AfterFunc, NewTimer, After, Timer.Stop, Timer.Reset)
// that stay cheap with a million pending, never fire early, and cost nothing
// while nothing is due.
//
//	tw, err := timingwheel.New(time.Millisecond, 512)
//	if err != nil { ... }
//	defer tw.Stop()
//	t := tw.AfterFunc(30*time.Second, func() { conn.Close() })
//	...
//	t.Stop() // the request finished in time
//
// The package-level AfterFunc, NewTimer and After use a default wheel (1 ms
// tick, 512 buckets a level), so replacing time.AfterFunc is a one-word change.
//
// # Design
//
// The wheel is the one Kafka uses for its request purgatory. Level 0 has
// wheelSize buckets of one tick each. A timer too far ahead for level 0 goes
// to level 1, whose buckets are wheelSize ticks wide, and so on: level L has
// buckets of wheelSize^L ticks, and is created the first time a timer needs
// it. Each non-empty bucket is offered to a DelayQueue (package delayqueue)
// under its expiration: the earliest due tick of the timers put in it (on
// level 0, the bucket's one tick), where Kafka uses the tick at which the
// bucket's range starts. The poller (or a caller, see below) takes
// the earliest bucket once it is due, advances the current time to that
// bucket's expiration and re-inserts its timers: those due fire, the rest
// drop to a finer level. So the poller wakes for ticks where some timer
// fires, not once more per level to cascade it first. A bucket that all its
// timers leave before it is due (Stop, Reset, a cancelled context) is left
// vacant in the delay queue, which asks about each new head before arming
// the alarm and drops a vacant one; at the head already, it is taken out
// at once on an exact alarm, and on an early alarm the first time a head
// at its expiration is emptied, else left to the ring the early alarm was
// set for (below); so no alarm is set for stopped timers, and since a shard
// keeps no more vacant buckets than others, they hold memory in proportion to the
// pending timers (a shard keeps one spare page of buckets besides). A
// small bucket whose earliest timer leaves moves its expiration on to the
// next. Moving the earliest expiration earlier moves the poller's alarm
// without waking it. On the System clock the alarm is early, never late: it
// moves later only when the head's bucket is emptied, once per expiration,
// so when the head moves later, or leaves again at an expiration it left
// before, it may ring once to find nothing due, and is then set at the
// head (delayqueue's lazy.go);
// on any other clock, a FakeClock included, it stays exactly at the head, so
// no goroutine wakes for an empty tick. A bucket keeps its timers in blocks
// of 64 pointers, each timer knowing its slot, so arming and stopping are O(1), a Timer is
// the only allocation of an AfterFunc (48 bytes), and no Timer points to
// another, which keeps the garbage collector's marking of a million pending
// timers parallel. Time is integer ticks on the monotonic clock.
//
// The poller is what the delay queue's alarm wakes: on the System clock,
// with callbacks on goroutines of their own (the default), the alarm is a
// runtime timer that starts a goroutine, as time.AfterFunc does, which
// advances the wheel and runs the last callback it fired itself, so a timer
// firing alone costs one goroutine, as the runtime's does; otherwise (a
// Clock of your own, WithWorkerPool, WithInlineCallbacks) it is one
// goroutine that sleeps on the alarm.
//
// The levels are split into shards, 4×GOMAXPROCS of them (rounded up to a
// power of two, at most 1024), each with its own lock: a
// timer goes to the shard its P uses (found by the P's id, and changed only
// when the P finds that shard's lock held), as the runtime keeps timers per
// P, so Ps do not share locks or cache lines; adds, stops and the
// flush of a shard's buckets exclude each other under that shard's lock, as
// Kafka's SystemTimer requires of its one lock. The shards share the delay
// queue. A goroutine calling AfterFunc, NewTimer or Reset that finds a bucket
// due flushes it itself (a bounded amount of work, callbacks handed to the
// executor, never run on the caller), as the runtime runs due timers from the
// scheduler loop it is already in; the poller is the fallback for a wheel
// nobody calls, and while callers keep up its alarm rings up to one grace
// (two ticks, at most 2 ms) after a bucket is due, so it is not woken at all.
//
// With wheelSize rounded to a power of two (8 here, 512 by default), the
// levels of a 1 ms wheel are:
//
//	level  bucket width        span (wheelSize buckets)   default wheel (512): span
//	0      1 tick   =  1 ms       8 ms                      512 ms
//	1      8 ticks  =  8 ms      64 ms                      4.4 min
//	2      64 ticks = 64 ms     512 ms                      37 h
//	3      512 ticks            4.1 s                       2.2 years
//
// # Never early: a worked cascade
//
// Kafka gives a timer the bucket whose range contains its deadline and fires
// the bucket when its range starts, so a timer can fire up to a tick early.
// This wheel rounds the deadline up to a whole tick instead: a timer set for
// d at clock time e is due at tick D = ceil((e+d)/tick), and fires only once
// the wheel's current tick has reached D, which it does only when the clock
// reads at least D ticks. A bucket never expires before its earliest timer
// is due, and its flush re-inserts every timer by its own D.
//
// Take the 8-bucket, 1 ms wheel above, started at 0, and AfterFunc(100.3ms)
// called at 0.2 ms: the deadline is 100.5 ms, so D = 101. A second timer,
// AfterFunc(119.4ms) at 0.3 ms, has deadline 119.7 ms, D = 120.
//
//   - Insert at current tick 0. Level 0 holds ticks 0..7: no. Level 1 holds
//     slots 0..7 of 8 ticks (ticks 0..63): 101>>3 = 12, no. Level 2 holds
//     slots of 64 ticks: 101>>6 = 1, so bucket 1 of level 2 (ticks
//     64..127), which expires at its earliest timer's due tick, 101. The
//     second timer (120>>6 = 1) joins it; 120 is later, so the bucket
//     still expires at 101. The poller sleeps until 101 ms.
//   - At 101 ms the poller takes that bucket; the current tick becomes 101.
//     The first timer's D = 101 is not after the current tick, so f starts:
//     0.5 ms after the deadline, never before. The second, re-inserted, is
//     19 ticks ahead: not level 0 (8 ticks), but level 1, slot 120>>3 = 15
//     (bucket 15 mod 8 = 7), expiring at tick 120.
//   - At 120 ms it fires, 0.3 ms after its deadline.
//
// Two wake-ups for two timers due at two ticks. Kafka's rule would have
// woken at 64 ms (cascade), 96 ms (cascade), 100 ms (fire the first, 0.5 ms
// early) and 112 and 119 ms (the second, 0.7 ms early). If the first timer
// is stopped before 101 ms, the bucket, now holding one timer, moves its
// expiration on to 120; on a FakeClock the poller sleeps until then, and on
// the System clock the alarm, set for 101 ms and never moved later, rings
// once at 101 ms, finds nothing due, and is set for 120 ms.
//
// # Guarantees
//
//   - Never early: a callback starts, or a value is sent on C, only after d
//     has elapsed on the monotonic clock, at every level and after every
//     cascade; at most one tick plus scheduling delay late, plus up to one
//     grace (min(2×tick, 2 ms)) while callers are advancing the wheel.
//   - Exact Stop: for every arming of a timer exactly one of "a Stop returned
//     true" and "the timer fired" holds, even while the poller cascades it.
//   - Reset returns what time.Timer.Reset returns and re-arms a fired
//     AfterFunc timer; channel timers follow Go 1.23 semantics (no stale
//     value after Stop or Reset returns).
//   - ScheduleFunc runs from the previous scheduled time (no drift), and no
//     run starts after a Stop that returned true. With WallClock() a
//     schedule's times are read on the wall clock: never before them, even
//     after the wall clock steps or the machine resumes (a step forward is
//     noticed within about a minute, and missed runs run once).
//   - d <= 0 fires promptly and asynchronously; durations up to
//     math.MaxInt64 saturate instead of wrapping.
//   - Stop of the wheel is idempotent, drops and releases pending timers,
//     and its poller (and WithWorkerPool's workers) have exited when it
//     returns; callbacks already started on their own goroutines are not
//     waited for. Adds after it neither block nor fire.
//   - Adds hold their shard's lock for an amortized constant amount of work
//     (an append to a bucket's block). They never wait for the poller as
//     such, but may wait for its hold of a shard's lock, at most 256 timers
//     (about 6 µs); a ScheduleFunc also waits for the Next calls of other
//     schedules, which all run under the first shard's lock. A caller that
//     finds a bucket due advances the wheel by at most 64 timers.
//
// # Choosing the tick and the wheel size
//
// The tick is the lateness you accept: a timer fires within one tick after
// its deadline (plus up to min(2×tick, 2 ms) while callers advance the wheel,
// plus scheduling delay), never before. For network timeouts of seconds, the
// default 1 ms is plenty; 10 ms suits timeouts of minutes. A finer tick costs
// more: the wheel does work, and the poller may wake, once per tick that has
// a due bucket, and a timer's deadline is spread over more buckets (each
// bucket that receives timers is one entry in the delay queue). A tick below
// about 100 µs buys nothing, as the runtime's own timers are rarely more
// punctual than that.
//
// The wheel size sets how far each level reaches: level L spans
// wheelSize^(L+1) ticks (see the table above). A timer on level L is moved
// down L times before it fires, unless it is stopped first, as most timeouts
// are; so choose the size so that your common timeout lands on level 0 or 1.
// With the default 512 at 1 ms, timeouts up to 0.5 s are never moved, up to
// 4.4 minutes once, up to 37 hours twice. Size costs little memory: a level
// is created only when a timer needs it, with a table of wheelSize/64
// pointers per shard, and buckets are made and released as they are used.
//
// Share one wheel per process, as Netty advises for its HashedWheelTimer: a
// wheel has its own poller, runtime alarm, delay queue and
// 4×GOMAXPROCS shards, and all timers due in one tick of a shard share one bucket,
// however many there are. A wheel per connection or per request multiplies
// all of that and batches nothing. The package-level functions use one
// default wheel (1 ms, 512); make your own only to choose another tick, a
// Clock, or an executor.
//
// # Differences from package time
//
// Timer.C has capacity one (time's reports zero since Go 1.23). Callbacks
// run on a new goroutine each by default, as time.AfterFunc's do;
// WithWorkerPool and WithInlineCallbacks trade that for lower cost. Lateness
// is bounded by the tick, not by the runtime's netpoller. Use WithClock and
// a FakeClock to test code built on a wheel without sleeping.
//
// A wheel made with New inside a testing/synctest bubble runs on the
// bubble's fake time (its alarm is one of the bubble's timers); Stop it
// before the bubble ends, since its poller belongs to the bubble. Do not
// use the default wheel in a bubble: it outlives every test, so if a bubble
// creates it, the poller belongs to that bubble.
package timingwheel
