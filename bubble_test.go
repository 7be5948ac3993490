//go:build go1.25

package timingwheel

import (
	"context"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// bubbleChildEnv names the test a re-executed test binary runs as the child
// of runInChild.
const bubbleChildEnv = "TIMINGWHEEL_BUBBLE_CHILD"

// runInChild runs the test named name in a child test binary and fails t if
// the child does not pass. A bubble touched from outside kills the process
// with a fatal error that no recover sees, so a test that may end that way
// runs in a child; the child, seeing bubbleChildEnv, runs body instead.
func runInChild(t *testing.T, name string, body func(t *testing.T)) {
	t.Helper()
	if os.Getenv(bubbleChildEnv) == name {
		body(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), bubbleChildEnv+"="+name)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("the child test binary did not pass (%v):\n%s", err, out)
	}
}

// TestPackageFunctionsInTwoBubbles is the drop-in promise kept under
// testing/synctest: code that calls the package-level functions, tested in
// two bubbles at once, runs on each bubble's fake time. Never early: every
// wait is at least its duration of the bubble's time; and no real hours
// pass, so a wait on real time would end the run by its timeout. TestMain
// has made the process's default wheel outside the bubbles, as a program's
// tests would.
func TestPackageFunctionsInTwoBubbles(t *testing.T) {
	runInChild(t, "TestPackageFunctionsInTwoBubbles", func(t *testing.T) {
		for _, name := range []string{"first", "second"} {
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				synctest.Test(t, usePackageFunctions)
			})
		}
	})
}

// usePackageFunctions uses every package-level function as code under test
// would, on waits of minutes and hours.
func usePackageFunctions(t *testing.T) {
	start := time.Now()
	since := func() time.Duration { return time.Since(start) }

	tm := NewTimer(time.Hour)
	tm.Reset(2 * time.Hour) // Reset advances the wheel its caller uses
	fired := make(chan time.Duration, 1)
	AfterFunc(time.Minute, func() { fired <- since() })
	after := After(time.Second)
	ctx, cancel := WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	tk := NewTicker(10 * time.Minute)
	defer tk.Stop()
	runs := make(chan time.Duration, 1)
	sched := ScheduleFunc(Every(45*time.Minute), func() {
		select {
		case runs <- since():
		default:
		}
	})
	defer sched.Stop()

	<-after
	assert.GreaterOrEqual(t, since(), time.Second, "After")
	assert.GreaterOrEqual(t, <-fired, time.Minute, "AfterFunc")
	<-tk.C
	assert.GreaterOrEqual(t, since(), 10*time.Minute, "NewTicker")
	<-ctx.Done()
	assert.GreaterOrEqual(t, since(), 30*time.Minute, "WithTimeout")
	assert.ErrorIs(t, ctx.Err(), context.DeadlineExceeded)
	assert.GreaterOrEqual(t, <-runs, 45*time.Minute, "ScheduleFunc")
	<-tm.C
	assert.GreaterOrEqual(t, since(), 2*time.Hour, "NewTimer after Reset")
}

// In a bubble, Default is the bubble's wheel, the same for every call there;
// outside, the process's. Two bubbles never share one.
func TestDefaultInBubble(t *testing.T) {
	process := Default()
	assert.Same(t, process, Default(), "outside bubbles")
	var first *TimingWheel
	synctest.Test(t, func(t *testing.T) {
		first = Default()
		assert.NotSame(t, process, first, "a bubble got the process's wheel")
		done := make(chan *TimingWheel)
		go func() { done <- Default() }()
		assert.Same(t, first, <-done, "another goroutine of the bubble")
	})
	synctest.Test(t, func(t *testing.T) {
		assert.NotSame(t, first, Default(), "a later bubble got an earlier one's wheel")
		assert.NotSame(t, process, Default(), "a bubble got the process's wheel")
	})
}

func TestBubbleID(t *testing.T) {
	for _, c := range []struct {
		header string
		id     uint64
		ok     bool
	}{
		{"goroutine 7 [running, synctest bubble 2]:\nmain.f()", 2, true},
		{"goroutine 7 [running, locked to thread, synctest bubble 31]:\n", 31, true},
		{`goroutine 7 [running, synctest bubble 4 labels:{"k": ", synctest bubble 9"}]:`, 4, true},
		{"goroutine 7 [running]:\nmain.f()", 0, false},
		{"goroutine 7 [running]:\nmain.f(\", synctest bubble 3]\")", 0, false},
		{"goroutine 7 [running, synctest bubble 12", 0, false}, // cut short
		{"goroutine 7 [running, synctest bubble ]:", 0, false},
		{"", 0, false},
	} {
		id, ok := bubbleID(c.header)
		assert.Equal(t, c.ok, ok, "%q", c.header)
		assert.Equal(t, c.id, id, "%q", c.header)
	}
}

// A goroutine whose time.Now has no monotonic reading is in a bubble if its
// clock is one a bubble can read (from 2000-01-01 on), even where the header
// names no bubble: it then gets a wheel of its own, made in its bubble.
func TestBubbleWheelWithoutID(t *testing.T) {
	const unnamed = "goroutine 7 [running]:\n"
	a := bubbleWheelAt(bubbleEpoch, unnamed)
	require.NotNil(t, a, "a bubble's first instant")
	b := bubbleWheelAt(bubbleEpoch.Add(40*365*24*time.Hour), unnamed)
	require.NotNil(t, b, "a bubble forty years on")
	assert.NotSame(t, a, b, "two calls without a bubble's name shared a wheel")
	assert.Nil(t, bubbleWheelAt(time.Date(1884, 1, 1, 0, 0, 0, 0, time.UTC), unnamed), "before 1885")
	assert.Nil(t, bubbleWheelAt(time.Date(2157, 6, 1, 0, 0, 0, 0, time.UTC), unnamed), "after 2157")
	assert.Nil(t, bubbleWheelAt(bubbleEpoch.Add(-time.Nanosecond), unnamed), "before any bubble's time")
	named := bubbleWheelAt(bubbleEpoch, "goroutine 7 [running, synctest bubble 1000000007]:\n")
	assert.Same(t, named, bubbleWheelAt(time.Date(2157, 6, 1, 0, 0, 0, 0, time.UTC),
		"goroutine 8 [running, synctest bubble 1000000007]:\n"), "a named bubble")
}

// A bubble's wheel is released after the bubble ends: a test binary running
// many bubbles does not keep a wheel for each.
func TestBubbleWheelsReleased(t *testing.T) {
	before := bubbles.len()
	for range 3 {
		synctest.Test(t, func(t *testing.T) {
			AfterFunc(time.Hour, func() {}) // pending when the bubble ends
			<-After(time.Minute)
		})
	}
	require.Eventually(t, func() bool {
		runtime.GC()
		return bubbles.len() <= before
	}, 10*time.Second, 10*time.Millisecond, "bubble wheels kept after their bubbles ended")
}
