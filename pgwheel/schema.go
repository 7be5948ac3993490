package pgwheel

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// schemaMissing wraps ErrSchemaTooOld, whose text says to run Migrate,
// around err when the server knows no table, column or function of
// pgwheel's (SQLSTATE 42P01, 42703, 42883, the message naming a pgwheel_
// object): a database Migrate never ran on, or an older schema. Any other
// error is returned as it is. Every operation's error goes through it, so
// the first call on such a database tells what to do, not
// "function pgwheel_clock() does not exist".
func schemaMissing(err error) error {
	var pe *pgconn.PgError
	if err == nil || !errors.As(err, &pe) || errors.Is(err, ErrSchemaTooOld) {
		return err
	}
	switch pe.Code {
	case "42P01", "42703", "42883":
		if strings.Contains(pe.Message, "pgwheel_") {
			return fmt.Errorf("%w: %w", ErrSchemaTooOld, err)
		}
	}
	return err
}
