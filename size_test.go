package timingwheel

import (
	"testing"
	"unsafe"
)

// TestTimerSize guards the memory promise: a pending AfterFunc timer is one
// 48-byte object (the runtime's costs 112 bytes and a heap slot).
func TestTimerSize(t *testing.T) {
	if got := unsafe.Sizeof(Timer{}); got != 48 {
		t.Fatalf("Timer is %d bytes, want 48: the size class and the README's figures depend on it", got)
	}
}

func TestDuePacking(t *testing.T) {
	for _, tick := range []int64{0, 1, 12345, maxDueTick} {
		for _, s := range []timerState{stateIdle, statePending, stateFired, stateStopped} {
			d := makeDue(tick, s)
			if d.tick() != tick || d.state() != s {
				t.Fatalf("makeDue(%d, %d) unpacks to (%d, %d)", tick, s, d.tick(), d.state())
			}
		}
	}
}
