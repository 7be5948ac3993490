package sqlitewheel

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/go-timingwheel/timingwheel/durable"
)

// One process per file. Open, Migrate and FileSchemaVersion hold an
// exclusive lock on the lock file path+"-lock" (flock, released by the
// kernel when the process ends, however it ends) for as long as they use the
// file: another process's attempt fails at once with ErrInUse instead of
// writing beside this one. Two processes could share the file (SQLite's
// locks keep it consistent), but each would wait for the other's write lock,
// up to BusyTimeout, then fail a write with SQLITE_BUSY (8 of 10,000 adds in
// 1 run of 4, issue 30), and neither would hear of the other's adds before
// its next poll. Within a process, every Store of the file shares the one
// lock: Stores of several namespaces work together.
//
// The lock file is not the database file: closing any descriptor of a file
// drops every POSIX lock the process holds on it, SQLite's included, so
// this code never opens the database file itself once SQLite may have it
// open. On systems without flock (see lock_other.go) nothing is locked.

// fileLocks are this process's locks, by the lock file's absolute path.
var fileLocks = struct {
	sync.Mutex
	m map[string]*fileLock
}{m: map[string]*fileLock{}}

type fileLock struct {
	f    *os.File
	refs int
}

// lockFile takes the process's lock of the database file at path, or
// shares it if the process holds it already, and returns its release.
func lockFile(path string) (release func(), err error) {
	abs, err := filepath.Abs(path + "-lock")
	if err != nil {
		return nil, fmt.Errorf("sqlitewheel: open %s: %w", path, err)
	}
	fileLocks.Lock()
	defer fileLocks.Unlock()
	l := fileLocks.m[abs]
	if l == nil {
		f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil { // as SQLite's SQLITE_CANTOPEN (classify)
			return nil, fmt.Errorf("%w: sqlitewheel: open %s: %w", durable.ErrUnrecoverable, path, err)
		}
		if err := flockExclusive(f); err != nil {
			f.Close()
			return nil, fmt.Errorf("%w: %s (one process per file: for several, use pgwheel or rediswheel): %w",
				ErrInUse, path, err)
		}
		l = &fileLock{f: f}
		fileLocks.m[abs] = l
	}
	l.refs++
	var once sync.Once
	return func() {
		once.Do(func() {
			fileLocks.Lock()
			defer fileLocks.Unlock()
			if l.refs--; l.refs == 0 {
				delete(fileLocks.m, abs)
				l.f.Close() // drops the flock
			}
		})
	}, nil
}

// createPrivate creates the database file at path, empty and readable by
// its owner only, unless it exists: SQLite gives its -wal and -shm files the
// database file's mode, so they are private too. Tasks hold callback
// headers, which carry receivers' credentials. An existing file keeps its
// mode, and is not opened here (see the note on locks above).
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, fs.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: sqlitewheel: open %s: %w", durable.ErrUnrecoverable, path, err)
	}
	return f.Close()
}
