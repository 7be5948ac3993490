//go:build go1.25

package timingwheel

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
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
// pass, so a wait on real time would end the run by its timeout.
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
