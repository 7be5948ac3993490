package sqlitewheel

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// beginWrite begins a write transaction on the writer w (BEGIN IMMEDIATE:
// it takes the file's write lock), waiting for the lock as long as ctx
// allows. A Store's own writes never wait on each other (the writer is one
// connection); another Store or process on the same file holds the lock
// for its transactions. SQLite's busy handler waits up to
// Options.BusyTimeout per attempt and then fails with SQLITE_BUSY, which no
// caller can act on but by trying again, and which its handler may give
// after a while of starvation however short the other's transactions (8 of
// 10,000 adds failed after the default 5 s in 1 run of 4 with two
// processes, issue 30): so beginWrite tries again, after a pause of
// busyPauseMin doubling to busyPauseMax, until ctx ends or giveUpAfter(busy)
// has passed (busy: the Store's Options.BusyTimeout, 0 for the default:
// two busy timeouts, and never less than busyGiveUpMin), and then returns
// an error that wraps durable.ErrUnavailable (another holds the file): a
// Queue's group commit sends without its callers' cancellation, so ctx
// alone could make it wait forever behind a process that never lets go. Only the BEGIN is retried: once a transaction holds the
// lock its statements do not meet SQLITE_BUSY.
func beginWrite(ctx context.Context, w *sql.DB, busy time.Duration) (*sql.Tx, error) {
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	giveUp := time.Now().Add(giveUpAfter(busy))
	pause := busyPauseMin
	for {
		tx, err := w.BeginTx(ctx, nil)
		if err == nil || !isBusy(err) {
			return tx, err
		}
		if time.Now().After(giveUp) {
			return nil, fmt.Errorf("sqlitewheel: the file's write lock was held by another connection for %v: %w: %w",
				giveUpAfter(busy), durable.ErrUnavailable, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("sqlitewheel: waiting for the file's write lock, held by another connection: %w: %w",
				durable.ErrUnavailable, context.Cause(ctx))
		case <-time.After(pause):
		}
		pause = min(2*pause, busyPauseMax)
	}
}

// giveUpAfter is how long beginWrite waits for the write lock, busy
// timeouts included: two of them (a caller such as timerd's API answers
// 503 after it, so it stays short: 10 s at the default), but never less
// than busyGiveUpMin, since
// another process that writes without pause can hold on to the lock for
// longer than ten short timeouts (with 1 ms, 42 of 800 adds beside one
// failed after 10 ms under -race, and 8 of 800 after 1 s with pauses of up
// to 50 ms; TestTwoProcessesOnOneFile, TestBeginWriteOutwaitsAShortBusyTimeout).
func giveUpAfter(busy time.Duration) time.Duration { return max(2*busy, busyGiveUpMin) }

// busyGiveUpMin is the shortest wait for the write lock before a write is
// unavailable: SQLite's own default busy timeout.
const busyGiveUpMin = DefaultBusyTimeout

// The pauses between BEGINs that found the write lock held past
// BusyTimeout: short, since the lock is held for one transaction at a time
// and another process that writes without pause lets it go only between
// two of them (with pauses of up to 50 ms, some adds beside one waited
// more than a second).
const (
	busyPauseMin = time.Millisecond
	busyPauseMax = 5 * time.Millisecond
)

func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}
