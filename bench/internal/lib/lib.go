// Package lib puts the timer libraries under comparison behind one small
// interface, so that every workload runs the same code against each of them.
//
// The interface costs one indirect call per operation for every library
// alike (about 2 ns), and converting a pointer handle to Handle does not
// allocate, so allocation counts are the libraries' own — except go-zero's
// key, see Zero.
package lib

import (
	"fmt"
	"sync/atomic"
	"time"

	"github.com/go-timingwheel/timingwheel"
	"github.com/zeromicro/go-zero/core/collection"
)

// Handle is an armed timer.
type Handle interface {
	// Stop reports whether it prevented the timer from firing.
	Stop() bool
	// Reset re-arms the timer to fire after d and reports whether it was
	// still pending.
	Reset(d time.Duration) bool
}

// Lib is one timer implementation.
type Lib interface {
	Name() string
	AfterFunc(d time.Duration, f func()) Handle
	// Sync returns once every operation issued before it has taken effect.
	// Only go-zero, whose operations are messages to a goroutine, needs it.
	Sync()
	// Pending is the library's own count of pending timers, or -1 if it
	// keeps none.
	Pending() int
	// Wakeups counts the library's own poller wake-ups, or -1 if unknown.
	Wakeups() int64
	Close()
}

// Config selects a library and the parameters of the wheels.
type Config struct {
	Name string // "runtime", "wheel", "wheel-pool", "wheel-inline" or "gozero"
	Tick time.Duration
	Size int // slots per level (ours) or slots (go-zero)
	// Workers is the pool size for "wheel-pool".
	Workers int
}

// Names are the libraries compared in every workload, in table order.
var Names = []string{"wheel", "runtime", "gozero"}

// New builds the library named by c.Name.
func New(c Config) (Lib, error) {
	if c.Tick <= 0 {
		c.Tick = time.Millisecond
	}
	if c.Size <= 0 {
		c.Size = 512
	}
	switch c.Name {
	case "runtime":
		return Runtime{}, nil
	case "wheel", "wheel-pool", "wheel-inline":
		var opts []timingwheel.Option
		switch c.Name {
		case "wheel-pool":
			opts = append(opts, timingwheel.WithWorkerPool(max(c.Workers, 1)))
		case "wheel-inline":
			opts = append(opts, timingwheel.WithInlineCallbacks())
		}
		tw, err := timingwheel.New(c.Tick, c.Size, opts...)
		if err != nil {
			return nil, err
		}
		return &Wheel{name: c.Name, TW: tw}, nil
	case "gozero":
		return NewZero(c.Tick, c.Size)
	}
	return nil, fmt.Errorf("lib: unknown library %q", c.Name)
}

// Runtime is package time: time.AfterFunc, Stop and Reset.
type Runtime struct{}

func (Runtime) Name() string { return "runtime" }
func (Runtime) AfterFunc(d time.Duration, f func()) Handle {
	return time.AfterFunc(d, f)
}
func (Runtime) Sync()          {}
func (Runtime) Pending() int   { return -1 }
func (Runtime) Wakeups() int64 { return -1 }
func (Runtime) Close()         {}

// Wheel is this module's timing wheel.
type Wheel struct {
	name string
	TW   *timingwheel.TimingWheel
}

func (w *Wheel) Name() string { return w.name }
func (w *Wheel) AfterFunc(d time.Duration, f func()) Handle {
	return w.TW.AfterFunc(d, f)
}
func (w *Wheel) Sync()          {}
func (w *Wheel) Pending() int   { return w.TW.Len() }
func (w *Wheel) Wakeups() int64 { return int64(w.TW.Stats().Wakeups) }
func (w *Wheel) Close()         { w.TW.Stop() }

// Zero adapts go-zero's core/collection.TimingWheel, a single-level wheel
// owned by one goroutine that receives every operation over an unbuffered
// channel and addresses timers by key.
//
// The key is a pointer the adapter allocates per timer (8 B, 1 alloc): a
// server would key by an object it already has, so this allocation is the
// adapter's, and it is counted in go-zero's figures. go-zero cannot say
// whether a removal or a move found the timer pending: Stop and Reset
// return true when the message was accepted, and the workloads check
// instead that no callback ran (Fired).
type Zero struct {
	TW    *collection.TimingWheel
	fired atomic.Int64
	sync  zeroKey
}

type zeroKey struct {
	z *Zero
}

// NewZero builds a go-zero wheel of size slots turning every tick.
func NewZero(tick time.Duration, size int) (*Zero, error) {
	z := &Zero{}
	tw, err := collection.NewTimingWheel(tick, size, func(_, v any) {
		z.fired.Add(1)
		v.(func())()
	})
	if err != nil {
		return nil, err
	}
	z.TW = tw
	return z, nil
}

func (z *Zero) Name() string { return "gozero" }
func (z *Zero) AfterFunc(d time.Duration, f func()) Handle {
	k := &zeroKey{z}
	if err := z.TW.SetTimer(k, f, d); err != nil {
		panic("lib: go-zero SetTimer: " + err.Error())
	}
	return k
}

// Sync relies on the wheel goroutine handling one message at a time: when
// it accepts this removal of a key never set, it has finished every
// earlier one.
func (z *Zero) Sync()          { _ = z.TW.RemoveTimer(&z.sync) }
func (z *Zero) Pending() int   { return -1 }
func (z *Zero) Wakeups() int64 { return -1 }
func (z *Zero) Close()         { z.TW.Stop() }

// Fired counts callbacks go-zero has run.
func (z *Zero) Fired() int64 { return z.fired.Load() }

func (k *zeroKey) Stop() bool { return k.z.TW.RemoveTimer(k) == nil }
func (k *zeroKey) Reset(d time.Duration) bool {
	return k.z.TW.MoveTimer(k, d) == nil
}
