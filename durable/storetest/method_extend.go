package storetest

import (
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Store.Extend: a current token's lease moves to lease after the store's now
// (ExtendOK, or ExtendCancelled once Cancel marked the task); any other
// token, and a key not in flight, is ExtendLost and changes nothing. Codes
// come in the leases' order.
func testMethodExtend(t *testing.T, open func(t *testing.T) durable.Store) {
	f := newFixture(t, open, durable.Options{})
	a := f.inFlight("a", "")
	b := f.inFlight("b", "")
	f.add("sched", f.future, "")
	if r, err := f.st.Cancel(f.ctx, "b", 0, 0); err != nil || !r.Found {
		t.Fatalf("Cancel b: %+v, %v", r, err)
	}
	before := f.get("a").Due
	if b.part != a.part {
		// One call per partition, as the Queue makes them.
		codes, err := f.st.Extend(f.ctx, b.part, 2*time.Hour, []durable.Lease{{Key: "b", Token: b.Token}})
		if err != nil || len(codes) != 1 || codes[0] != durable.ExtendCancelled {
			t.Errorf("Extend of the cancelled b: %v, %v, want [cancelled]", codes, err)
		}
	}
	leases := []durable.Lease{
		{Key: "a", Token: a.Token},
		{Key: "a", Token: a.Token + "0"},
		{Key: "sched", Token: a.Token},
		{Key: "missing", Token: a.Token},
		{Key: "a", Token: ""},
	}
	want := []durable.ExtendCode{durable.ExtendOK, durable.ExtendLost, durable.ExtendLost, durable.ExtendLost, durable.ExtendLost}
	if b.part == a.part {
		leases = append(leases, durable.Lease{Key: "b", Token: b.Token})
		want = append(want, durable.ExtendCancelled)
	}
	codes, err := f.st.Extend(f.ctx, a.part, 2*time.Hour, leases)
	if err != nil || len(codes) != len(want) {
		t.Fatalf("Extend: %v, %v, want %v", codes, err, want)
	}
	for i := range want {
		if codes[i] != want[i] {
			t.Errorf("Extend %q token %q: %d, want %d", leases[i].Key, leases[i].Token, codes[i], want[i])
		}
	}
	// The lease's end is an hour later, by the store's clock: later than the
	// claim's hour, and at least two hours after this test began.
	if info := f.get("a"); info.State != durable.StateInFlight || !info.Due.After(before) || info.Due.Before(ms(f.past).Add(3*time.Hour)) {
		t.Errorf("a after Extend: %+v, want in flight until two hours from now (was %v)", info, before)
	}
	if info := f.get("sched"); info.State != durable.StateScheduled || !info.Due.Equal(ms(f.future)) {
		t.Errorf("the scheduled task after a lost Extend: %+v", info)
	}
}
