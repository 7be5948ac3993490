package rediswheel

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPeriodicBadInput(t *testing.T) {
	q := newQueue(t, standalone(t), Options{})
	ctx := context.Background()
	assert.ErrorIs(t, q.Periodic(ctx, "", Every(time.Second), nil), ErrPeriodicName)
	assert.ErrorIs(t, q.Periodic(ctx, strings.Repeat("n", MaxPeriodicNameLen+1), Every(time.Second), nil), ErrPeriodicName)
	_, err := q.RemovePeriodic(ctx, "")
	assert.ErrorIs(t, err, ErrPeriodicName)
	assert.PanicsWithValue(t, "durable: Periodic with nil Schedule", func() { q.Periodic(ctx, "x", nil, nil) })
	removed, err := q.RemovePeriodic(ctx, "never registered")
	require.NoError(t, err)
	assert.False(t, removed)

	// The script refuses what it does not know, and a pointer going back.
	t.Cleanup(func() { q.client.Del(ctx, q.registryKey()) })
	_, err = q.periodicOp(ctx, "rewind", "x")
	assert.ErrorContains(t, err, "unknown op rewind")
	_, err = q.periodicOp(ctx, "register", "x")
	require.NoError(t, err)
	_, err = q.periodicOp(ctx, "advance", "x", 2000, 1000)
	assert.ErrorContains(t, err, "is not after")
	_, err = q.periodicOp(ctx, "advance", "x", "1e3", 2000)
	assert.ErrorContains(t, err, "bad pointers")
}

// occurrences lists the times (Unix ms) of name's tasks stored in q's
// namespace, scheduled or due, in order.
func occurrences(t *testing.T, q *testQueue, name string) []int64 {
	t.Helper()
	var out []int64
	for _, keys := range q.keys {
		members, err := q.client.ZRange(context.Background(), keys[0], 0, -1).Result()
		require.NoError(t, err)
		for _, m := range members {
			if rest, ok := strings.CutPrefix(m, periodicPrefix+name+"@"); ok {
				ms, err := strconv.ParseInt(rest, 10, 64)
				require.NoError(t, err)
				out = append(out, ms)
			}
		}
	}
	slices.Sort(out)
	return out
}

// A schedule whose replicas were all down for a day runs the missed day
// once, at its latest time, and goes on from there; removing it cancels the
// occurrence waiting ahead and stops the loop.
func TestPeriodicCatchUpOnce(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{})
	ctx := context.Background()
	t.Cleanup(func() { c.Del(ctx, q.registryKey()) })
	dayAgo := redisTime(t, c).Add(-24 * time.Hour).Truncate(time.Second).UnixMilli()
	require.NoError(t, c.HSet(ctx, q.registryKey(), "tick", dayAgo).Err())

	// 86,400 missed seconds: more than catchUpWalk, so the probe finds the latest.
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- q.Periodic(pctx, "tick", Every(time.Second), []byte("p")) }()
	pointer := func() int64 {
		p, err := c.HGet(ctx, q.registryKey(), "tick").Int64()
		require.NoError(t, err)
		return p
	}
	var got []int64
	eventually(t, patience, "a catch-up run and the next time", func() bool {
		got = occurrences(t, q, "tick")
		return len(got) >= 2 && got[len(got)-1] == pointer()
	})
	now := redisTime(t, c).UnixMilli()
	assert.Zero(t, got[0]%1000, "on the schedule")
	assert.Greater(t, got[0], now-5000, "the missed day runs once, as its latest time (give or take a loaded machine)")
	for i := 1; i < len(got); i++ {
		assert.Equal(t, got[i-1]+1000, got[i], "then the schedule goes on")
	}
	last := got[len(got)-1]
	assert.Greater(t, last, now-1000, "the pointer names the occurrence waiting ahead (or just due)")

	removed, err := q.RemovePeriodic(ctx, "tick")
	require.NoError(t, err)
	assert.True(t, removed)
	if redisTime(t, c).UnixMilli() < last {
		assert.NotContains(t, occurrences(t, q, "tick"), last, "the occurrence waiting ahead is cancelled")
	}
	select {
	case err := <-done:
		assert.ErrorIs(t, err, ErrPeriodicRemoved)
	case <-time.After(patience):
		t.Fatal("Periodic did not notice its removal")
	}
	cancel()
	assert.Subset(t, got, occurrences(t, q, "tick"), "the loop added nothing after the removal")
	assert.Zero(t, c.Exists(ctx, q.registryKey()).Val())
}

// A schedule with no more times stops its loop with ErrScheduleEnded after
// adding its last time.
func TestPeriodicScheduleEnds(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{})
	ctx := context.Background()
	t.Cleanup(func() { c.Del(ctx, q.registryKey()) })
	last := redisTime(t, c).Add(300 * time.Millisecond).Truncate(time.Millisecond)
	once := ScheduleFunc(func(t time.Time) time.Time {
		if t.Before(last) {
			return last
		}
		return time.Time{}
	})
	errc := make(chan error, 1)
	go func() { errc <- q.Periodic(ctx, "once", once, nil) }()
	select {
	case err := <-errc:
		assert.ErrorIs(t, err, ErrScheduleEnded)
	case <-time.After(patience):
		t.Fatal("Periodic did not end with its schedule")
	}
	assert.Equal(t, []int64{last.UnixMilli()}, occurrences(t, q, "once"))
}

func TestPeriodicReplicas(t *testing.T) {
	t.Run("standalone", func(t *testing.T) { testPeriodicReplicas(t, standalone(t), 0) })
	t.Run("cluster", func(t *testing.T) { testPeriodicReplicas(t, cluster(t), 0) })
	// Retained, a finished time's key still exists, so Add of it again is a
	// no-op: no time runs twice, stalled replicas or not.
	t.Run("retention", func(t *testing.T) { testPeriodicReplicas(t, standalone(t), time.Minute) })
}

// periodicLog records the deliveries of one schedule's occurrences.
type periodicLog struct {
	mu    sync.Mutex
	times map[int64]int // occurrence ms -> deliveries
	early []string
	late  []time.Duration // Redis time at delivery minus the occurrence's time
}

func (l *periodicLog) handler(c redis.UniversalClient) Handler {
	return func(ctx context.Context, tk Task) error {
		now, err := c.Time(ctx).Result()
		if err != nil {
			return err
		}
		_, rest, _ := strings.Cut(tk.Key, "@")
		ms, err := strconv.ParseInt(rest, 10, 64)
		if err != nil {
			return Permanent(err)
		}
		l.mu.Lock()
		defer l.mu.Unlock()
		l.times[ms]++
		l.late = append(l.late, time.Duration(now.UnixMilli()-ms)*time.Millisecond)
		if now.UnixMilli() < ms {
			l.early = append(l.early, tk.Key+" at "+now.UTC().Format(time.RFC3339Nano))
		}
		return nil
	}
}

// sorted returns the delivered times in order and the times delivered more
// than once.
func (l *periodicLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.times)
}

func (l *periodicLog) sorted() (all, twice []int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for ms, n := range l.times {
		all = append(all, ms)
		if n > 1 {
			twice = append(twice, ms)
		}
	}
	slices.Sort(all)
	return all, twice
}

// A replica is one worker process: a Queue of its own, running the schedule
// and delivering tasks.
type replica struct {
	stopLoop func()
	loopErr  chan error
	stopRun  func()
}

func startReplica(t *testing.T, c redis.UniversalClient, ns, name string, s Schedule, h Handler, onError func(error), retention time.Duration) *replica {
	q := newQueue(t, c, Options{Namespace: ns, OnError: onError, Retention: retention})
	ctx, cancel := context.WithCancel(context.Background())
	r := &replica{stopLoop: cancel, loopErr: make(chan error, 1)}
	go func() { r.loopErr <- q.Periodic(ctx, name, s, []byte("tick")) }()
	t.Cleanup(cancel)
	r.stopRun = run(t, q, h)
	return r
}

// loopResult waits for the replica's Periodic to return.
func (r *replica) loopResult(t *testing.T) error {
	select {
	case err := <-r.loopErr:
		return err
	case <-time.After(patience):
		t.Fatal("Periodic did not return within 10s")
		return nil
	}
}

// Three replicas run one 200ms schedule: each time runs once, never early,
// none skipped. All are stopped for catchUpGrace and more, and three new ones start: the
// occurrence that waited in Redis runs, the missed times run once (as the
// latest of them), and the schedule goes on. RemovePeriodic stops every
// loop and leaves nothing scheduled.
func testPeriodicReplicas(t *testing.T, c redis.UniversalClient, retention time.Duration) {
	const period = 200 * time.Millisecond
	const name = "tick"
	ns := uniqueNamespace(t)
	ctx := context.Background()
	registry := "{" + ns + ".periodic}:sched"
	t.Cleanup(func() { c.Del(ctx, registry) })
	log := &periodicLog{times: map[int64]int{}}
	h := log.handler(c)
	pms := period.Milliseconds()
	var (
		mu      sync.Mutex
		stalled []string // ErrPeriodicStalled reports: the times that may run twice
	)
	onError := func(err error) {
		t.Logf("OnError: %v", err)
		if errors.Is(err, ErrPeriodicStalled) {
			mu.Lock()
			stalled = append(stalled, err.Error())
			mu.Unlock()
		}
	}

	start := func() []*replica {
		var rs []*replica
		for range 3 {
			rs = append(rs, startReplica(t, c, ns, name, Every(period), h, onError, retention))
		}
		return rs
	}
	first := start()
	// About 2s of the schedule, longer if the machine is slow.
	eventually(t, 30*time.Second, "the first replicas run 8 times", func() bool { return log.count() >= 8 })
	for _, r := range first {
		r.stopLoop()
		require.NoError(t, r.loopResult(t), "Periodic returns nil when its context ends")
		r.stopRun()
	}
	pending, err := c.HGet(ctx, registry, name).Int64()
	require.NoError(t, err)

	// Every replica down, long enough for missed times to be run once.
	time.Sleep(catchUpGrace + 3*period)
	second := start()
	n := log.count()
	eventually(t, 30*time.Second, "the new replicas run 8 times", func() bool { return log.count() >= n+8 })
	check := newQueue(t, c, Options{Namespace: ns})
	removed, err := check.RemovePeriodic(ctx, name)
	require.NoError(t, err)
	assert.True(t, removed)
	for _, r := range second {
		assert.ErrorIs(t, r.loopResult(t), ErrPeriodicRemoved)
	}
	eventually(t, patience, "nothing left to run", func() bool {
		s := totals(t, check)
		return s.Due+s.Scheduled+s.InFlight == 0
	})
	for _, r := range second {
		r.stopRun()
	}
	assert.Zero(t, c.Exists(ctx, registry).Val())

	all, twice := log.sorted()
	slices.Sort(log.late)
	t.Logf("%d deliveries, lateness by the Redis clock: median %v, p90 %v, max %v (with the times that waited while no replica ran)",
		len(log.late), log.late[len(log.late)/2], log.late[len(log.late)*9/10], log.late[len(log.late)-1])
	// Without retention a time runs twice only after a replica stalled for
	// a period (this machine is loaded), and then it was reported.
	if retention > 0 {
		assert.Empty(t, twice, "times delivered twice although retained")
	}
	mu.Lock()
	for _, ms := range twice {
		key := occurrenceKey(name, ms)
		assert.True(t, slices.ContainsFunc(stalled, func(s string) bool { return strings.Contains(s, strconv.Quote(key)) }),
			"%s ran twice, and no stall was reported: %v", key, stalled)
	}
	mu.Unlock()
	assert.Empty(t, log.early, "deliveries before their time")
	for _, ms := range all {
		assert.Zero(t, ms%pms, "%d is on the schedule", ms)
	}
	i := slices.Index(all, pending)
	require.GreaterOrEqual(t, i, 0, "the occurrence waiting while every replica was down runs: %d in %v", pending, all)
	// The times up to it were added by the first replicas; some may have
	// been due but not delivered at the stop, and run after it.
	require.GreaterOrEqual(t, i, 6, "the first replicas ran the schedule: %v", all)
	for j := 1; j <= i; j++ {
		assert.Equal(t, pms, all[j]-all[j-1], "no time skipped while replicas run: %v", all[:i+1])
	}
	after := all[i+1:]
	require.GreaterOrEqual(t, len(after), 5, "the new replicas ran the schedule")
	assert.Greater(t, after[0]-pending, 2*pms, "the missed times ran once, not each: %v", all)
	for j := 1; j < len(after); j++ {
		assert.Equal(t, pms, after[j]-after[j-1], "no time skipped while replicas run: %v", after)
	}
}

// The registry's compare-and-set: a replica that read an old pointer cannot
// move it, so it cannot make a time run again.
func TestPeriodicRegistry(t *testing.T) {
	q := newQueue(t, standalone(t), Options{})
	ctx := context.Background()
	t.Cleanup(func() { q.client.Del(ctx, q.registryKey()) })
	op := func(op string, args ...any) periodicState {
		t.Helper()
		st, err := q.periodicOp(ctx, op, "x", args...)
		require.NoError(t, err)
		return st
	}
	reg := op("register")
	assert.Equal(t, int64(1), reg.status)
	assert.Equal(t, reg.now, reg.pointer, "a new schedule starts at Redis's now")
	again := op("register")
	assert.Equal(t, periodicState{status: 0, pointer: reg.pointer, now: again.now}, again, "a later registration joins it")
	p := reg.pointer
	assert.Equal(t, int64(1), op("advance", p, p+200).status)
	stale := op("advance", p, p+400)
	assert.Equal(t, int64(0), stale.status, "a stale replica cannot move the pointer")
	assert.Equal(t, p+200, stale.pointer)
	assert.Equal(t, p+200, op("read").pointer)
	rm := op("remove")
	assert.Equal(t, int64(0), rm.status)
	assert.Equal(t, p+200, rm.pointer)
	assert.Equal(t, int64(-1), op("read").status)
	assert.Equal(t, int64(-1), op("advance", p+200, p+400).status)
	assert.Equal(t, int64(-1), op("remove").status)
}

// A replica that died between adding a time and moving the pointer to it
// leaves a task no pointer names; the next replica adds the time again, a
// no-op, and moves the pointer: the time runs once.
func TestPeriodicResumesAfterCrash(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{})
	ctx := context.Background()
	t.Cleanup(func() { c.Del(ctx, q.registryKey()) })
	const period = time.Hour
	now := redisTime(t, c)
	p := now.Truncate(period).UnixMilli() // due: the crashed replica's step had begun
	n := p + period.Milliseconds()
	require.NoError(t, c.HSet(ctx, q.registryKey(), "x", p).Err())
	added, err := q.Add(ctx, occurrenceKey("x", n), []byte("first"), time.UnixMilli(n))
	require.NoError(t, err)
	require.True(t, added)

	pctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- q.Periodic(pctx, "x", Every(period), []byte("second")) }()
	eventually(t, patience, "the pointer moved", func() bool {
		v, err := c.HGet(ctx, q.registryKey(), "x").Int64()
		require.NoError(t, err)
		return v == n
	})
	cancel()
	require.NoError(t, <-done)
	assert.Equal(t, []int64{n}, occurrences(t, q, "x"))
	payload, err := c.HGet(ctx, q.keys[q.shard(occurrenceKey("x", n))][3], occurrenceKey("x", n)).Result()
	require.NoError(t, err)
	assert.Equal(t, "first", payload, "the time was added once")
}

// Removing a schedule and registering it again, with Retention, must not
// lose the time that was waiting at the removal: it never ran, so the new
// registration adds it again rather than meet it retained as cancelled.
func TestPeriodicRemoveThenRegisterRunsTheNextTime(t *testing.T) {
	c := standalone(t)
	q := newQueue(t, c, Options{Retention: time.Hour})
	ctx := context.Background()
	t.Cleanup(func() { c.Del(ctx, q.registryKey()) })
	pointer := func() int64 {
		p, _ := c.HGet(ctx, q.registryKey(), "x").Int64()
		return p
	}
	register := func() int64 {
		t.Helper()
		pctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- q.Periodic(pctx, "x", Every(time.Hour), []byte("p")) }()
		var next int64
		eventually(t, patience, "the next time added", func() bool {
			next = pointer()
			return next > redisTime(t, c).UnixMilli()
		})
		cancel()
		require.NoError(t, <-done)
		return next
	}
	next := register()
	require.Equal(t, []int64{next}, occurrences(t, q, "x"))
	removed, err := q.RemovePeriodic(ctx, "x")
	require.NoError(t, err)
	require.True(t, removed)
	require.Empty(t, occurrences(t, q, "x"))

	if again := register(); again != next {
		t.Skipf("the hour turned during the test (%d, then %d)", next, again)
	}
	assert.Equal(t, []int64{next}, occurrences(t, q, "x"), "the time waiting at the removal was lost")
}
