//go:build !unix

package sqlitewheel

import "os"

// flockExclusive locks nothing where flock is missing: a second process is
// not refused there, and its writes may fail with SQLITE_BUSY.
func flockExclusive(*os.File) error { return nil }
