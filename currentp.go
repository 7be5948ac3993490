package timingwheel

import (
	"sync/atomic"
	_ "unsafe" // for go:linkname
)

// The shard of a new timer is chosen by the calling goroutine's P (see
// lockShard), and this file is how the wheel learns which P that is: the
// runtime's procPin, which returns the P's id, the same call sync.Pool makes
// for its per-P slots. The runtime keeps procPin reachable by go:linkname
// for packages outside the standard library and promises not to change its
// signature (see its comment in runtime/proc.go and go.dev/issue/67401).
//
// procPin writes nothing, where a sync.Pool holding each P's shard took a
// Get and a Put per AfterFunc whose pointer writes pay the collector's write
// barrier while it marks a million pending timers: 3.85 against 11.51 ns in
// BenchmarkPLookup (docs/design/shards.md).

//go:linkname procPin runtime.procPin
func procPin() int

//go:linkname procUnpin runtime.procUnpin
func procUnpin()

// currentP returns the id of the P running the caller, which may run on
// another P as soon as this returns: good for affinity, not for exclusion.
func currentP() uint32 {
	p := procPin()
	procUnpin()
	return uint32(p)
}

// A shardHint is the shard a P arms its timers in, changed only when the P
// finds that shard's lock held (see lockShard). Each sits on its own cache
// line, as it is read by every AfterFunc on its P.
type shardHint struct {
	shard atomic.Uint32 // index in the wheel's shards
	_     [60]byte
}
