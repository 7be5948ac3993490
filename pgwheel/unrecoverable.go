package pgwheel

import (
	"errors"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/jackc/pgx/v5/pgconn"
)

// unrecoverable wraps durable.ErrUnrecoverable around err when retrying will
// not heal it, so that durable's Run stops instead of retrying for ever:
// the server refused the credentials (SQLSTATE class 28) or knows no such
// database (3D000), the role may not use the tables (42501), or the schema
// is missing or not this code's (undefined table, column or function:
// 42P01, 42703, 42883: call Migrate). Any other error (the server
// unreachable, restarting, a connection cut, a serialization failure) is
// returned as it is, for Run to retry.
func unrecoverable(err error) error {
	err = schemaMissing(err)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return err
	}
	switch {
	case len(pe.Code) == 5 && pe.Code[:2] == "28",
		pe.Code == "3D000", pe.Code == "42501", pe.Code == "42P01", pe.Code == "42703", pe.Code == "42883":
		return fmt.Errorf("%w: %w", durable.ErrUnrecoverable, err)
	}
	return err
}
