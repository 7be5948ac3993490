package timingwheel

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// FuzzAPISequence decodes its input into the model test's operations: the
// first byte picks the wheel's shape, the rest drive the same harness, so
// the fuzzer explores operation orders and durations the seeded runs of
// TestModel have not drawn.
func FuzzAPISequence(f *testing.F) {
	f.Add([]byte{0})
	// AfterFunc, advance to its boundary, Stop it, Reset it.
	f.Add([]byte{0, 3, 10, 5, 70, 12, 1, 40, 0, 55, 0, 9, 70, 11, 70, 2})
	// Channel timers on a wheel of size 4, received from and reset.
	f.Add([]byte{1, 20, 5, 21, 22, 70, 11, 62, 0, 62, 1, 55, 1, 2, 70, 3, 62, 1})
	// A schedule and huge durations on a 1ns-tick wheel.
	f.Add([]byte{4, 26, 4, 0, 9, 0, 21, 0, 0, 0, 0, 0, 0, 0, 0, 70, 10, 3, 0, 0, 0, 0, 0, 0, 0, 255, 92, 0})
	// On a 1ns-tick wheel: NewTicker(3) ticks at 4 (a phase point passed),
	// drops the tick at 6 for a full C and backs off to 12, is Stopped with
	// a tick on C, Reset(1), received from; non-positive periods panic.
	f.Add([]byte{4, 0, 23, 28, 1, 3, 2, 70, 4, 3, 70, 4, 1, 30, 1, 50, 1, 1, 1, 70, 4, 3, 62, 1, 70, 4, 0, 28, 0, 1, 0, 50, 1, 0, 1, 2, 70, 4, 1})
	f.Add([]byte("\x03zero or negative durations, big jumps, cascades across levels of a 64-slot wheel"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		// A hang (a flush that never ends) must become a crasher the fuzzer
		// records, not a stalled worker.
		watchdog := time.AfterFunc(semWait, func() {
			buf := make([]byte, 1<<20)
			panic(fmt.Sprintf("FuzzAPISequence: one input ran for %v:\n%s", semWait, buf[:runtime.Stack(buf, true)]))
		})
		defer watchdog.Stop()
		cfg := modelConfigs[int(data[0])%len(modelConfigs)]
		h := newHarness(t, &byteChooser{b: data[1:]}, cfg, "fuzz")
		h.maxTimers = 64
		h.run(len(data))
	})
}
