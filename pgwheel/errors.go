package pgwheel

import "errors"

// Sentinel errors, for errors.Is.
var (
	// ErrNamespace reports an empty, too long or malformed namespace.
	ErrNamespace = errors.New("pgwheel: bad namespace")
	// ErrKey reports an empty or too long task key, or one PostgreSQL's text
	// cannot hold (a NUL byte, invalid UTF-8).
	ErrKey = errors.New("pgwheel: bad task key")
	// ErrArgument reports any other bad argument: a negative limit, an
	// unknown outcome or state, a bad cursor, a task type PostgreSQL cannot
	// store.
	ErrArgument = errors.New("pgwheel: bad argument")
	// ErrSchemaTooNew reports a database migrated by a newer pgwheel than
	// this one: Migrate refuses to touch it, and CheckSchema reports it.
	ErrSchemaTooNew = errors.New("pgwheel: database schema is newer than this code")
	// ErrSchemaTooOld reports a database not migrated to SchemaVersion yet
	// (CheckSchema): call Migrate.
	ErrSchemaTooOld = errors.New("pgwheel: database schema is older than this code; call Migrate")
	// ErrNotFound reports that Get found no task under the key.
	ErrNotFound = errors.New("pgwheel: task not found")
)
