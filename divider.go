package timingwheel

import "math/bits"

// divider divides non-negative int64s by a constant with a multiply and a
// shift instead of a 64-bit DIV, which costs 10 to 40 ns on some x86 parts
// and sits on the path of every AfterFunc and Reset. It is the round-up
// method of Granlund and Montgomery ("Division by invariant integers using
// multiplication", 1994, Theorem 4.2) for 63-bit dividends: with
// l = ceil(log2 d) and m = floor(2^(63+l)/d) + 1, we have
// 2^(63+l) < m*d <= 2^(63+l) + 2^l, so n/d == (n*m) >> (63+l) for every
// 0 <= n < 2^63, and m < 2^64 because d > 2^(l-1).
type divider struct {
	d     int64
	m     uint64 // 0 when d == 1
	shift uint   // l-1
}

func newDivider(d int64) divider {
	if d == 1 {
		return divider{d: 1}
	}
	l := uint(bits.Len64(uint64(d - 1)))
	q, _ := bits.Div64(1<<(l-1), 0, uint64(d)) // floor(2^(63+l) / d)
	return divider{d: d, m: q + 1, shift: l - 1}
}

// div returns n/d for n >= 0.
func (v divider) div(n int64) int64 {
	if v.m == 0 {
		return n
	}
	hi, _ := bits.Mul64(uint64(n), v.m)
	return int64(hi >> v.shift)
}
