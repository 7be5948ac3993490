package sqlitewheel

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// unavailable wraps durable.ErrUnavailable around err when retrying may heal
// it: another connection or process held the file's lock past BusyTimeout
// (SQLITE_BUSY), a table was locked by a statement of the same connection
// (SQLITE_LOCKED), or the call timed out. classify calls it for what it did
// not find unrecoverable.
func unavailable(err error) error {
	var se *sqlite.Error
	switch {
	case errors.As(err, &se) && (se.Code()&0xff == sqlite3.SQLITE_BUSY || se.Code()&0xff == sqlite3.SQLITE_LOCKED),
		errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("%w: %w", durable.ErrUnavailable, err)
	}
	return err
}

// Unavailable returns err wrapping durable.ErrUnavailable when retrying may
// heal it, as every durable.Store method's error does: for an
// application's own calls on the same file (timerd's schedule
// definitions), so that it tells "try again" from a bug as it does for the
// Queue's.
func Unavailable(err error) error { return unavailable(err) }
