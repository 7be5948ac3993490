package pgwheel

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// With the server unreachable (nothing listens on the port), every
// durable.Store method fails with an error wrapping durable.ErrUnavailable,
// never ErrUnrecoverable: retrying may heal it. Needs no server.
func TestUnreachableServerIsUnavailable(t *testing.T) {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://nobody:x@127.0.0.1:1/none?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	st, err := New(pool, "unreachable")
	if err != nil {
		t.Fatal(err)
	}
	lim := durable.Limits{MaxAttempts: 3, MaxDead: 10, MaxRetained: 10, ReapBatch: 10, MaxUnconfirmed: 3}
	req := &durable.AddRequest{Key: "k", At: 1}
	st.Add(ctx, []*durable.AddRequest{req})
	errs := map[string]error{"Add": req.Err}
	_, errs["Claim"] = st.Claim(ctx, 0, 1, time.Second, lim)
	_, errs["Extend"] = st.Extend(ctx, 0, time.Second, []durable.Lease{{Key: "k", Token: "1"}})
	_, errs["Settle"] = st.Settle(ctx, 0, lim, []durable.Outcome{{Key: "k", Token: "1", Kind: durable.OutcomeDone}})
	_, errs["Cancel"] = st.Cancel(ctx, "k", 0, 10)
	_, errs["Reschedule"] = st.Reschedule(ctx, "k", 1)
	_, _, errs["Requeue"] = st.Requeue(ctx, "k")
	_, errs["Get"] = st.Get(ctx, "k")
	_, _, errs["List"] = st.List(ctx, durable.StateDead, nil, 10)
	_, errs["Dead"] = st.Dead(ctx, 10)
	_, errs["Stats"] = st.Stats(ctx)
	errs["Pause"] = st.Pause(ctx, true)
	_, errs["Periodic"] = st.Periodic(ctx, durable.PeriodicRead, "p", 0, 0)
	for op, err := range errs {
		if !errors.Is(err, durable.ErrUnavailable) || errors.Is(err, durable.ErrUnrecoverable) {
			t.Errorf("%s: %v, want an error wrapping durable.ErrUnavailable only", op, err)
		}
	}
}

// The server's answers that retrying may heal wrap durable.ErrUnavailable;
// those of a bug or of a setup a person must fix do not.
func TestUnavailableSQLStates(t *testing.T) {
	for code, want := range map[string]bool{
		"08006": true, "08001": true, "57P01": true, "57P02": true, "57P03": true,
		"40001": true, "40P01": true, "53300": true,
		"23505": false, "42601": false, "22P02": false, "53100": false,
		"28P01": false, "42P01": false, // unrecoverable's
	} {
		err := unavailable(unrecoverable(fmt.Errorf("op: %w", &pgconn.PgError{Code: code})))
		if errors.Is(err, durable.ErrUnavailable) != want {
			t.Errorf("SQLSTATE %s: %v, want unavailable %v", code, err, want)
		}
	}
}
