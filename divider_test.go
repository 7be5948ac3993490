package timingwheel

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// TestDividerMatchesDivision holds the multiply-and-shift division against
// the / operator at the edges of both operands and at random.
func TestDividerMatchesDivision(t *testing.T) {
	ds := []int64{1, 2, 3, 7, 10, 1000, int64(time.Microsecond), int64(time.Millisecond),
		int64(7 * time.Millisecond), int64(time.Second), 1<<31 - 1, 1 << 32, 1<<62 + 1, math.MaxInt64 - 1, math.MaxInt64}
	r := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		ds = append(ds, 1+r.Int64N(math.MaxInt64), 1+r.Int64N(1<<40))
	}
	for _, d := range ds {
		v := newDivider(d)
		ns := []int64{0, 1, d - 1, d, d + 1, 2*d - 1, math.MaxInt64, math.MaxInt64 - 1, math.MaxInt64 / d * d, math.MaxInt64/d*d - 1}
		for range 2000 {
			ns = append(ns, r.Int64N(math.MaxInt64), r.Int64N(1<<50))
		}
		for _, n := range ns {
			if n < 0 {
				continue
			}
			if got, want := v.div(n), n/d; got != want {
				t.Fatalf("%d / %d = %d, divider says %d", n, d, want, got)
			}
		}
	}
}

func FuzzDivider(f *testing.F) {
	f.Add(int64(123456789), int64(time.Millisecond))
	f.Fuzz(func(t *testing.T, n, d int64) {
		if n < 0 || d <= 0 {
			return
		}
		if got, want := newDivider(d).div(n), n/d; got != want {
			t.Fatalf("%d / %d = %d, divider says %d", n, d, want, got)
		}
	})
}
