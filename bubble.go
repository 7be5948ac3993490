package timingwheel

import (
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"weak"
)

// The package-level functions in testing/synctest bubbles.
//
// A bubble's goroutines run on the bubble's fake clock and may not touch
// another bubble's channels and timers: the runtime kills the process
// ("send on synctest channel from outside bubble"). One wheel for the process
// breaks both rules: its alarm runs on real time, so a bubble waiting on it
// waits for real hours or deadlocks, and whoever advances it (its alarm's
// goroutine, or a caller's Reset flushing a due bucket) fires the timers of
// every bubble. So in a bubble the package-level functions use a wheel of that
// bubble, made there on first use: its alarm is a runtime timer of the bubble
// and every goroutine it starts belongs to the bubble. Such a wheel has no
// goroutine of its own (see New), so it never keeps a bubble from ending;
// its pending timers end with the bubble's time, and the wheel is released
// once nothing references it.
//
// The runtime offers no call that names the caller's bubble; three of its
// rules do:
//
//   - Bubbles exist only in test binaries (synctest.Test takes a
//     *testing.T), and testing.Testing, a load, reports one; so other
//     programs pay nothing for the check. (A time.Now on every call would:
//     about 190 ns on the 2-core machine where a package-level
//     AfterFunc+Stop takes 430 to 750.) A test binary not built by go test
//     gets testing.Testing only if its build sets it; where it does not,
//     make the wheel with New in the bubble.
//   - In a bubble time.Now has no monotonic reading; elsewhere it lacks one
//     only on wall clocks before 1885 or after 2157, which it cannot store
//     with one (see time_runtimeNow in the runtime's time.go).
//   - runtime.Stack begins with the goroutine's header, which ends in
//     "synctest bubble N" (since Go 1.25).
//
// So in a test binary the package-level functions also cost a time.Now, and
// in a bubble a runtime.Stack of the caller's goroutine.

// bubbleEpoch is the time every bubble's clock starts at.
var bubbleEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// bubbleWheel returns the wheel of the testing/synctest bubble the caller
// runs in, or nil outside bubbles.
func bubbleWheel() *TimingWheel {
	if !testing.Testing() {
		return nil
	}
	now := time.Now()
	if now != now.Round(0) { // Round(0) strips the monotonic reading
		return nil
	}
	var buf [128]byte
	return bubbleWheelAt(now, string(buf[:runtime.Stack(buf[:], false)]))
}

// bubbleWheelAt is bubbleWheel for a goroutine whose time.Now read now, with
// no monotonic reading, and whose runtime.Stack begins with header.
func bubbleWheelAt(now time.Time, header string) *TimingWheel {
	if id, ok := bubbleID(header); ok {
		return bubbles.wheel(id)
	}
	if now.Before(bubbleEpoch) || now.Year() >= 2157 {
		return nil // a wall clock time.Now cannot store a monotonic reading with
	}
	// A bubble the header does not name (a runtime before Go 1.25, or one
	// that words it differently): a wheel for this call alone is of the
	// bubble just the same, at the cost of a wheel per call.
	return newDefaultWheel()
}

// bubbleID returns N from the goroutine header runtime.Stack begins with,
// such as "goroutine 7 [running, locked to thread, synctest bubble 2]:"
// (see goroutineheader in the runtime's traceback.go; pprof labels, quoted,
// may follow N).
func bubbleID(header string) (uint64, bool) {
	header, _, _ = strings.Cut(header, "\n")
	_, after, ok := strings.Cut(header, ", synctest bubble ")
	if !ok {
		return 0, false
	}
	end := strings.IndexFunc(after, func(r rune) bool { return r < '0' || r > '9' })
	if end < 0 {
		return 0, false // the header was cut short
	}
	id, err := strconv.ParseUint(after[:end], 10, 64)
	return id, err == nil
}

// bubbles holds each bubble's wheel, weakly: a bubble that has ended leaves
// its wheel to the garbage collector, and a cleanup removes its entry. Bubble
// ids are never reused, so an entry never outlives its bubble in a way that
// matters, only in memory.
var bubbles = bubbleWheels{m: make(map[uint64]weak.Pointer[TimingWheel])}

type bubbleWheels struct {
	mu sync.Mutex // a Mutex, not a Cond: waking a waiter of another bubble is allowed
	m  map[uint64]weak.Pointer[TimingWheel]
}

func (b *bubbleWheels) wheel(id uint64) *TimingWheel {
	b.mu.Lock()
	defer b.mu.Unlock()
	if tw := b.m[id].Value(); tw != nil {
		return tw
	}
	tw := newDefaultWheel()
	b.m[id] = weak.Make(tw)
	runtime.AddCleanup(tw, b.release, id)
	return tw
}

// release removes id's entry once its wheel is collected, unless a newer
// wheel of the bubble took the entry in the meantime.
func (b *bubbleWheels) release(id uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.m[id].Value() == nil {
		delete(b.m, id)
	}
}

func (b *bubbleWheels) len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.m)
}
