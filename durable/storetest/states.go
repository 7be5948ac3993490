package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Stats counts per state as Get and List tell states, through every move
// between them: claims, each settle outcome, a lost lease, Cancel (of a
// scheduled, a retained and an in-flight task), Replace, Reschedule and
// Requeue.
func testStatsCountStates(t *testing.T, open func(t *testing.T) durable.Store) {
	st := open(t)
	q := newQueue(t, st, durable.Options{Retention: time.Hour})
	ctx := context.Background()
	later := time.Now().Add(time.Hour)
	add := func(key string, at time.Time) {
		t.Helper()
		if added, err := q.Add(ctx, key, nil, at); err != nil || !added {
			t.Fatalf("Add %s: %v, %v", key, added, err)
		}
	}
	settle := func(key string, o durable.Outcome) {
		t.Helper()
		add(key, time.Now())
		ct, p := claimKey(t, q, st, key, time.Hour)
		o.Key, o.Token = key, ct.Token
		s, err := st.Settle(ctx, p, q.Limits(), []durable.Outcome{o})
		if err != nil || s.Codes[0] == durable.SettleRejected {
			t.Fatalf("Settle %s: %+v, %v", key, s, err)
		}
	}

	add("scheduled", later)
	add("cancelled", later)
	if ok, err := q.Cancel(ctx, "cancelled"); err != nil || !ok {
		t.Fatalf("Cancel: %v, %v", ok, err)
	}
	add("inflight", time.Now())
	inflight, inflightPart := claimKey(t, q, st, "inflight", time.Hour)
	settle("retrying", durable.Outcome{Kind: durable.OutcomeRetry, Delay: time.Hour.Milliseconds(), Err: "failed"})
	settle("postponed", durable.Outcome{Kind: durable.OutcomeLater, Delay: time.Hour.Milliseconds(), Err: "not now"})
	settle("dead", durable.Outcome{Kind: durable.OutcomeDead, Err: "gone"})
	settle("done", durable.Outcome{Kind: durable.OutcomeDone})
	// A lease that runs out: the task is due again, retrying. Paused, the
	// claims only reap.
	add("expired", time.Now())
	exp, p := claimKey(t, q, st, "expired", durable.MinLease)
	if _, err := st.Extend(ctx, p, durable.MinLease, []durable.Lease{{Key: exp.Key, Token: exp.Token}}); err != nil {
		t.Fatal(err)
	}
	if err := q.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	Eventually(t, "the lost lease reaped", func() bool {
		for p := range st.Partitions() {
			if _, err := st.Claim(ctx, p, 1, time.Hour, q.Limits()); err != nil {
				t.Fatalf("Claim: %v", err)
			}
		}
		info, err := q.Get(ctx, "expired")
		return err == nil && info.State == durable.StateRetrying
	})
	if err := q.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if ok, err := q.Reschedule(ctx, "expired", later); err != nil || !ok { // out of the next claim's way
		t.Fatalf("Reschedule: %v, %v", ok, err)
	}
	// Released on its first delivery: scheduled again.
	settle("released", durable.Outcome{Kind: durable.OutcomeRelease})
	checkStates(t, q, durable.StateCounts{Scheduled: 2, Retrying: 3, InFlight: 1, Dead: 1, Done: 1, Cancelled: 1})

	if ok, err := q.Requeue(ctx, "dead"); err != nil || !ok { // keeps its last error: retrying
		t.Fatalf("Requeue: %v, %v", ok, err)
	}
	for _, k := range []string{"retrying", "cancelled"} {
		if err := q.Replace(ctx, k, nil, later); err != nil { // starts over: scheduled
			t.Fatalf("Replace %s: %v", k, err)
		}
	}
	for _, k := range []string{"done", "postponed", "inflight"} { // forgotten; cancelled; marked
		if ok, err := q.Cancel(ctx, k); err != nil || !ok {
			t.Fatalf("Cancel %s: %v, %v", k, ok, err)
		}
	}
	if ok, err := q.Reschedule(ctx, "expired", later.Add(time.Minute)); err != nil || !ok { // still retrying
		t.Fatalf("Reschedule: %v, %v", ok, err)
	}
	checkStates(t, q, durable.StateCounts{Scheduled: 4, Retrying: 2, InFlight: 1, Cancelled: 1})

	// The marked task's settle finishes it as cancelled, whatever the outcome.
	s, err := st.Settle(ctx, inflightPart, q.Limits(), []durable.Outcome{{Key: "inflight", Token: inflight.Token, Kind: durable.OutcomeRetry, Err: "x"}})
	if err != nil || s.Codes[0] != durable.SettleCancelled {
		t.Fatalf("Settle of the cancelled task: %+v, %v", s, err)
	}
	checkStates(t, q, durable.StateCounts{Scheduled: 4, Retrying: 2, Cancelled: 2})
}

// checkStates fails t unless Stats counts want per state, in total and
// summed over the shards, and List finds as many tasks in each state.
func checkStates(t *testing.T, q *durable.Queue, want durable.StateCounts) {
	t.Helper()
	stats, err := q.Stats(context.Background())
	if err != nil {
		t.Fatalf("Stats: %v", err)
	}
	if stats.Total.States != want {
		t.Errorf("Stats per state %+v, want %+v", stats.Total.States, want)
	}
	for _, s := range []durable.State{durable.StateScheduled, durable.StateRetrying, durable.StateInFlight,
		durable.StateDead, durable.StateDone, durable.StateCancelled} {
		if n := listed(t, q, s); n != want.Of(s) {
			t.Errorf("List %s: %d tasks, want %d", s, n, want.Of(s))
		}
	}
	if old := stats.Total; old.Due+old.Scheduled != want.Scheduled+want.Retrying ||
		old.InFlight != want.InFlight || old.Dead != want.Dead || old.Retained != want.Done+want.Cancelled {
		t.Errorf("Stats by place %+v disagree with the counts per state %+v", old, want)
	}
}

// listed counts the tasks List returns in state, all pages.
func listed(t *testing.T, q *durable.Queue, s durable.State) int64 {
	t.Helper()
	var n int64
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 100 {
			t.Fatalf("List %s never ended", s)
		}
		page, next, err := q.List(context.Background(), s, cursor, 50)
		if err != nil {
			t.Fatalf("List %s: %v", s, err)
		}
		n += int64(len(page))
		if next == "" {
			return n
		}
		cursor = next
	}
}
