package timingwheel

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkWithTimeout is a handler's use of a timeout: WithTimeout, Done,
// cancel, with 100k contexts pending, made the same way and spread over
// minutes, on the wheel ("wheel") and with package context ("context") in
// one run: benchstat -col /impl compares them. The parent is Background,
// or a cancellable request-like context shared by all.
func BenchmarkWithTimeout(b *testing.B) {
	const pending = 100_000
	parents := []struct {
		name string
		make func() (context.Context, context.CancelFunc)
	}{
		{"background", func() (context.Context, context.CancelFunc) { return context.Background(), func() {} }},
		{"cancellable", func() (context.Context, context.CancelFunc) { return context.WithCancel(context.Background()) }},
	}
	type withTimeout func(context.Context, time.Duration) (context.Context, context.CancelFunc)
	impls := []struct {
		name  string
		setup func(b *testing.B) (withTimeout, func() int, func())
	}{
		{"wheel", func(b *testing.B) (withTimeout, func() int, func()) {
			tw, err := New(DefaultTick, DefaultWheelSize)
			if err != nil {
				b.Fatal(err)
			}
			return tw.WithTimeout, tw.Len, tw.Stop
		}},
		{"context", func(b *testing.B) (withTimeout, func() int, func()) {
			return context.WithTimeout, nil, func() {}
		}},
	}
	for _, p := range parents {
		for _, im := range impls {
			b.Run("parent="+p.name+"/impl="+im.name, func(b *testing.B) {
				withTimeout, length, done := im.setup(b)
				defer done()
				parent, cancelParent := p.make()
				defer cancelParent()
				r := rand.New(rand.NewPCG(1, 2))
				cancels := make([]context.CancelFunc, pending)
				for i := range cancels {
					ctx, cancel := withTimeout(parent, spreadMinutes(r))
					_ = ctx.Done()
					cancels[i] = cancel
				}
				defer func() {
					for _, cancel := range cancels {
						cancel()
					}
				}()
				ds := make([]time.Duration, 1024)
				for i := range ds {
					ds[i] = spreadMinutes(r)
				}
				var last context.Context
				b.ReportAllocs()
				b.ResetTimer()
				for i := range b.N {
					ctx, cancel := withTimeout(parent, ds[i&1023])
					<-ctxDoneNotYet(ctx)
					cancel()
					last = ctx
				}
				b.StopTimer()
				// It measured what it names: each context was pending until
				// cancelled, and cancel released its timer.
				if !errors.Is(last.Err(), context.Canceled) {
					b.Fatalf("Err of the last context = %v, want Canceled", last.Err())
				}
				if length != nil {
					if n := length(); n != pending {
						b.Fatalf("wheel Len = %d after the loop, want the %d background contexts", n, pending)
					}
				}
			})
		}
	}
}

// spreadMinutes returns a duration in [1 min, 5 min).
func spreadMinutes(r *rand.Rand) time.Duration {
	return time.Minute + time.Duration(r.Int64N(int64(4*time.Minute)))
}

// ctxDoneNotYet returns a closed channel if ctx.Done() is open, so that the
// benchmark calls Done, as a handler's select does, and fails if the context
// is done already.
func ctxDoneNotYet(ctx context.Context) <-chan struct{} {
	select {
	case <-ctx.Done():
		panic("context done before its deadline or cancel")
	default:
		return closedchan
	}
}

// BenchmarkChildOfWithTimeout is the cost of a package context child
// (context.WithCancel, Done, cancel) of a pending timeout context made by
// each implementation: on the wheel's, package context watches it through
// its AfterFunc method instead of the parent's map of children.
func BenchmarkChildOfWithTimeout(b *testing.B) {
	tw, err := New(DefaultTick, DefaultWheelSize)
	if err != nil {
		b.Fatal(err)
	}
	defer tw.Stop()
	for _, im := range []struct {
		name        string
		withTimeout func(context.Context, time.Duration) (context.Context, context.CancelFunc)
	}{{"wheel", tw.WithTimeout}, {"context", context.WithTimeout}} {
		b.Run("impl="+im.name, func(b *testing.B) {
			parent, cancel := im.withTimeout(context.Background(), time.Hour)
			defer cancel()
			var last context.Context
			b.ReportAllocs()
			for range b.N {
				child, cancelChild := context.WithCancel(parent)
				<-ctxDoneNotYet(child)
				cancelChild()
				last = child
			}
			b.StopTimer()
			if !errors.Is(last.Err(), context.Canceled) || parent.Err() != nil {
				b.Fatalf("child Err = %v, parent Err = %v: want Canceled, nil", last.Err(), parent.Err())
			}
		})
	}
}
