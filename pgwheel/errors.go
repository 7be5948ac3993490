package pgwheel

import "errors"

// Sentinel errors, for errors.Is. Bad input that durable's Queue checks
// (before any store call, the same on every store) gets durable's errors
// here too, for callers of this store's own methods: a key PostgreSQL's
// text cannot hold (a NUL byte, invalid UTF-8) wraps durable.ErrKey, such a
// task type durable.ErrTaskOption, such a periodic name
// durable.ErrPeriodicName.
var (
	// ErrNamespace reports an empty, too long or malformed namespace.
	ErrNamespace = errors.New("pgwheel: bad namespace")
	// ErrArgument reports a bad argument to an operation that the Queue
	// never sends (a negative limit or lease, a periodic pointer moved
	// backwards).
	ErrArgument = errors.New("pgwheel: bad argument")
	// ErrPoolTooSmall reports a pool New refuses: fewer than MinPoolConns
	// connections.
	ErrPoolTooSmall = errors.New("pgwheel: pool too small")
	// ErrSchemaTooNew reports a database migrated by a newer pgwheel than
	// this one: Migrate refuses to touch it, and CheckSchema reports it.
	ErrSchemaTooNew = errors.New("pgwheel: database schema is newer than this code")
	// ErrSchemaTooOld reports a database not migrated to SchemaVersion yet:
	// CheckSchema says so, and so does every operation that meets a missing
	// table, column or function of pgwheel's. Migrate heals it.
	ErrSchemaTooOld = errors.New("pgwheel: database schema is missing or older than this code: run pgwheel.Migrate (or timerd migrate)")
)
