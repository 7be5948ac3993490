package sqlitewheel

import "errors"

// Sentinel errors, for errors.Is. Bad task input (keys, cursors, limits) is
// refused by durable's Queue before it reaches the store, with durable's
// errors, as on every store.
var (
	// ErrOptions reports a bad path or Options field given to Open or
	// Migrate.
	ErrOptions = errors.New("sqlitewheel: bad options")
	// ErrSchemaTooNew reports a file migrated by a newer sqlitewheel than
	// this one: Open and Migrate refuse to touch it.
	ErrSchemaTooNew = errors.New("sqlitewheel: file schema is newer than this code")
	// ErrSchemaTooOld reports a file that holds tables but not the schema
	// this code works with (an older sqlitewheel's, or none yet in a file of
	// other tables): Open refuses it; call Migrate.
	ErrSchemaTooOld = errors.New("sqlitewheel: file schema is older than this code; call Migrate")
)
