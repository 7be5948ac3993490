package durable

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A replica that added a time but then finds no pointer naming it (the
// schedule was removed, or a replica with another schedule moved the
// pointer elsewhere) cancels what it added.
func TestPeriodicTakesBackOrphans(t *testing.T) {
	q, m := memQueue(t, Options{})
	ctx := context.Background()
	p := &periodic{q: q, name: "x", s: Every(time.Hour)}

	st, err := q.periodicOp(ctx, PeriodicRegister, "x", 0, 0)
	require.NoError(t, err)
	other := st.now + 1000
	_, err = q.periodicOp(ctx, PeriodicAdvance, "x", st.pointer, other)
	require.NoError(t, err)
	next, err := p.next(st.pointer)
	require.NoError(t, err)
	require.NoError(t, p.addThenAdvance(ctx, st, next, time.Now()))
	assert.Empty(t, m.occurrences("x"), "moved elsewhere: the time added is cancelled")

	_, err = q.RemovePeriodic(ctx, "x")
	require.NoError(t, err)
	assert.ErrorIs(t, p.addThenAdvance(ctx, st, next, time.Now()), ErrPeriodicRemoved)
	assert.Empty(t, m.occurrences("x"), "removed: the time added is cancelled")
}

// A replica whose step to add a time lasted past that time says so: another
// replica may have added the time again after it ran.
func TestPeriodicReportsStall(t *testing.T) {
	var reported []error
	q, _ := memQueue(t, Options{OnError: func(err error) { reported = append(reported, err) }})
	ctx := context.Background()
	p := &periodic{q: q, name: "x", s: Every(time.Second)}
	st, err := q.periodicOp(ctx, PeriodicRegister, "x", 0, 0)
	require.NoError(t, err)
	next, err := p.next(st.pointer)
	require.NoError(t, err)
	// As read 100ms before next by a replica that then stalled until after it.
	stale := periodicState{status: 0, pointer: st.pointer, now: next - 100}
	time.Sleep(time.UnixMilli(next + 50).Sub(time.Now()))
	require.NoError(t, p.addThenAdvance(ctx, stale, next, time.Now()))
	require.Len(t, reported, 1)
	assert.ErrorIs(t, reported[0], ErrPeriodicStalled)
	assert.ErrorContains(t, reported[0], strconv.Quote(occurrenceKey("x", next)))
}

// A replica that added a time and then stalled past it, while the others
// moved the pointer on (their Adds of that time no-ops), must not take its
// Add back: the task is the time's only one, and may be running or done.
// Here the others' moves are made first, so that the stalled replica's Add
// is the one that stores the time, as it was in the race.
func TestPeriodicStalledReplicaKeepsItsTime(t *testing.T) {
	q, _ := memQueue(t, Options{Retention: time.Hour, OnError: func(error) {}})
	ctx := context.Background()
	p := &periodic{q: q, name: "x", s: Every(time.Hour)}
	read, err := q.periodicOp(ctx, PeriodicRegister, "x", 0, 0)
	require.NoError(t, err)
	next, err := p.next(read.pointer)
	require.NoError(t, err)
	after, err := p.next(next)
	require.NoError(t, err)
	// The other replicas: the pointer moved to next, then, once next was
	// due, on to the time after.
	from := read.pointer
	for _, to := range []int64{next, after} {
		r, err := q.periodicOp(ctx, PeriodicAdvance, "x", from, to)
		require.NoError(t, err)
		require.Equal(t, int64(1), r.status)
		from = to
	}
	// The stalled replica, from its reading of the registered pointer.
	require.NoError(t, p.addThenAdvance(ctx, read, next, time.Now()))
	info, err := q.Get(ctx, occurrenceKey("x", next))
	require.NoError(t, err)
	assert.Equal(t, StateScheduled, info.State, "the time's only task was taken back")
}

// A time missed by less than catchUpGrace runs on its own, late, and so does
// each one after it: a replica that stalled half a second on a 100ms
// schedule runs the five times it missed, not only the latest as after an
// outage.
func TestPeriodicJustMissedTimesRunEach(t *testing.T) {
	q, m := memQueue(t, Options{})
	ctx := context.Background()
	p := &periodic{q: q, name: "x", s: Every(100 * time.Millisecond)}
	missed := time.Now().Add(-500 * time.Millisecond).Truncate(100 * time.Millisecond).UnixMilli()
	m.setPointer("x", missed)
	st, err := q.periodicOp(ctx, PeriodicRead, "x", 0, 0)
	require.NoError(t, err)
	_, err = p.step(ctx, st, time.Now())
	require.NoError(t, err)
	assert.Equal(t, []int64{missed + 100}, m.occurrences("x"), "the first missed time, on its own")
	st, err = q.periodicOp(ctx, PeriodicRead, "x", 0, 0)
	require.NoError(t, err)
	assert.Equal(t, missed+100, st.pointer)
}

// A replica whose reading of the registry is older than the time it would
// add reads again rather than add it: the time may have run and gone since.
func TestPeriodicStaleReadingAddsNothing(t *testing.T) {
	q, m := memQueue(t, Options{})
	ctx := context.Background()
	p := &periodic{q: q, name: "x", s: Every(time.Hour)}
	st, err := q.periodicOp(ctx, PeriodicRegister, "x", 0, 0)
	require.NoError(t, err)
	next, err := p.next(st.pointer)
	require.NoError(t, err)
	require.NoError(t, p.addThenAdvance(ctx, st, next, time.Now().Add(-2*time.Hour)))
	assert.Empty(t, m.occurrences("x"))
	again, err := q.periodicOp(ctx, PeriodicRead, "x", 0, 0)
	require.NoError(t, err)
	assert.Equal(t, st.pointer, again.pointer, "the pointer stays")
}
