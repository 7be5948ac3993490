package sqlitewheel

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// A write that waits out BusyTimeout behind another process's write lock
// fails with an error wrapping durable.ErrUnavailable (retrying may heal
// it), not ErrUnrecoverable; once the lock is let go, the same call works.
func TestHeldWriteLockIsUnavailable(t *testing.T) {
	st, path := openTemp(t, Options{BusyTimeout: 50 * time.Millisecond})
	q, err := durable.New(st, durable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil { // the write lock, held
		t.Fatal(err)
	}
	// A write waits for the lock as long as its context allows (busy.go):
	// then it is unavailable.
	wait, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = q.Add(wait, "k", nil, time.Now())
	cancel()
	if !errors.Is(err, durable.ErrUnavailable) || errors.Is(err, durable.ErrUnrecoverable) {
		t.Errorf("Add behind a held write lock: %v, want an error wrapping durable.ErrUnavailable only", err)
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	if added, err := q.Add(ctx, "k", nil, time.Now()); err != nil || !added {
		t.Errorf("Add once the lock is let go: %v, %v", added, err)
	}
}
