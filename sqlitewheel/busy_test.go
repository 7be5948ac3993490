package sqlitewheel

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// holdWriteLock takes path's write lock on a connection of its own and
// returns the function that lets it go.
func holdWriteLock(t *testing.T, path string) (release func()) {
	t.Helper()
	ctx := context.Background()
	other, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := other.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	return func() {
		if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
			t.Error(err)
		}
		conn.Close()
		other.Close()
	}
}

// TestBeginWriteOutwaitsAShortBusyTimeout: with a BusyTimeout of 1 ms, a
// write behind another connection's transaction of 100 ms waits it out
// (ten busy timeouts alone, the bound before, gave up after 10 ms).
func TestBeginWriteOutwaitsAShortBusyTimeout(t *testing.T) {
	st, path := openTemp(t, Options{BusyTimeout: time.Millisecond})
	release := holdWriteLock(t, path)
	done := make(chan struct{})
	go func() {
		defer close(done)
		time.Sleep(100 * time.Millisecond)
		release()
	}()
	tx, err := beginWrite(context.Background(), st.w, time.Millisecond)
	<-done
	if err != nil {
		t.Fatalf("BEGIN behind a 100 ms transaction with a 1 ms busy timeout: %v", err)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
}

// TestBeginWriteGivesUp: behind a lock never let go, a write with no
// deadline gives up after giveUpAfter, unavailable.
func TestBeginWriteGivesUp(t *testing.T) {
	st, path := openTemp(t, Options{BusyTimeout: time.Millisecond})
	release := holdWriteLock(t, path)
	defer release()
	began := time.Now()
	_, err := beginWrite(context.Background(), st.w, time.Millisecond)
	if !errors.Is(err, durable.ErrUnavailable) {
		t.Fatalf("BEGIN behind a held lock: %v, want durable.ErrUnavailable", err)
	}
	if waited := time.Since(began); waited < busyGiveUpMin {
		t.Errorf("gave up after %v, want at least %v", waited, busyGiveUpMin)
	}
}
