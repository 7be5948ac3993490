package sqlitewheel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/go-timingwheel/timingwheel/durable"
)

// createPrivate creates the database file at path, empty and readable by
// its owner only, unless it exists: SQLite gives its -wal and -shm files the
// database file's mode, so they are private too. Tasks hold callback
// headers, which carry receivers' credentials. An existing file keeps its
// mode, and is not opened here: closing any descriptor of a file drops
// every POSIX lock the process holds on it, SQLite's included (a Store of
// the file may be open in this process).
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil { // as SQLite's SQLITE_CANTOPEN (classify)
		return fmt.Errorf("%w: sqlitewheel: open %s: %w", durable.ErrUnrecoverable, path, err)
	}
	return f.Close()
}
