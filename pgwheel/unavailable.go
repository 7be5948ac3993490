package pgwheel

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"syscall"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/jackc/pgx/v5/pgconn"
)

// unavailable wraps durable.ErrUnavailable around err when retrying may heal
// it, so that a caller tells "try again" from a bug whatever the store
// (durable's Store contract): the server unreachable or the connection cut
// (a network error, a cut reply, pgconn's own "safe to retry" and
// timeouts), SQLSTATE class 08 (connection exception), 57P01-57P03 (admin
// or crash shutdown, starting up: a restart), 40001 and 40P01 (a
// serialization failure, a deadlock: the transaction may be run again),
// 53300 (too many connections). An error unrecoverable wrapped, and any
// other, is returned as it is. Every durable.Store method's error passes
// here.
func unavailable(err error) error {
	if err == nil || errors.Is(err, durable.ErrUnrecoverable) || errors.Is(err, durable.ErrUnavailable) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch {
		case len(pe.Code) == 5 && pe.Code[:2] == "08",
			pe.Code == "57P01", pe.Code == "57P02", pe.Code == "57P03",
			pe.Code == "40001", pe.Code == "40P01", pe.Code == "53300":
			return fmt.Errorf("%w: %w", durable.ErrUnavailable, err)
		}
		return err
	}
	var ne net.Error
	switch {
	case errors.As(err, &ne), pgconn.SafeToRetry(err), pgconn.Timeout(err),
		errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return fmt.Errorf("%w: %w", durable.ErrUnavailable, err)
	}
	return err
}

// Unavailable returns err wrapping durable.ErrUnavailable when retrying may
// heal it, as every durable.Store method's error does: for an
// application's own calls on the same pool (timerd's schedule
// definitions), so that it tells "try again" from a bug as it does for the
// Queue's.
func Unavailable(err error) error { return unavailable(err) }
