package sqlitewheel

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// TestFilesArePrivate: the files Open creates (the database, its WAL, its
// shared memory and the lock file) are readable by their owner only: tasks
// hold callback headers, receivers' credentials.
func TestFilesArePrivate(t *testing.T) {
	st, path := openTemp(t, Options{})
	q, err := durable.New(st, durable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.AddAfter(context.Background(), "k", []byte("Authorization: secret"), time.Hour); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(path + "*")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("files %v: want the database, its -wal and -shm at least", files)
	}
	for _, f := range files {
		fi, err := os.Stat(f)
		if err != nil {
			t.Fatal(err)
		}
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			t.Errorf("%s: mode %v, want no access for group and others", filepath.Base(f), perm)
		}
	}
}

// TestOneProcessPerFile: while a process has the file open, another
// process's Open, Migrate and FileSchemaVersion are refused with ErrInUse,
// at once rather than with SQLITE_BUSY after BusyTimeout at some later
// write; within one process, Stores of two namespaces share the file; once
// the other process is gone (even killed), the file opens.
func TestOneProcessPerFile(t *testing.T) {
	ctx := context.Background()
	st, path := openTemp(t, Options{})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	c := startChild(t, "hold", path)
	c.await(t, "open", 1)
	refused := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "another process") {
			t.Errorf("%s while another process has the file open: %v, want ErrInUse", what, err)
		}
	}
	st, err := Open(ctx, path, Options{})
	if err == nil {
		st.Close()
	}
	refused("Open", err)
	refused("Migrate", Migrate(ctx, path, Options{}))
	_, err = FileSchemaVersion(ctx, path)
	refused("FileSchemaVersion", err)

	c.kill(t)
	openAt(t, path, Options{})
	openAt(t, path, Options{Namespace: "other"})
}
