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

// TestBucketSize: a bucket is one 64-byte object (the size class above is
// 80), with the delay queue's slot and its place in the abandoned list.
func TestBucketSize(t *testing.T) {
	if got := unsafe.Sizeof(bucket{}); got != 64 {
		t.Fatalf("bucket is %d bytes, want 64", got)
	}
}
