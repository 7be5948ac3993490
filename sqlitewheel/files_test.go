package sqlitewheel

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
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

// TestTwoProcessesOnOneFile: two processes adding to one file at once both
// succeed, every add: a write that finds the other process's write lock
// held past BusyTimeout (1 ms here, so that it happens) waits again, for as
// long as its context allows, instead of failing with SQLITE_BUSY (8 of
// 10,000 adds failed so in 1 run of 4 with the default 5 s, issue 30).
func TestTwoProcessesOnOneFile(t *testing.T) {
	ctx := context.Background()
	st, path := openTemp(t, Options{})
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	c := startChild(t, "add", path)
	c.await(t, "added", 50) // the other process is adding
	st = openAt(t, path, Options{BusyTimeout: time.Millisecond})
	q, err := durable.New(st, durable.Options{})
	if err != nil {
		t.Fatal(err)
	}
	const goroutines, each = 8, 100
	errs := make(chan error, goroutines*each)
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := q.AddAfter(ctx, fmt.Sprintf("parent-%d-%d", g, i), nil, time.Hour); err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	failed := 0
	for err := range errs {
		if failed++; failed <= 3 {
			t.Errorf("add beside another process: %v", err)
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d adds failed", failed, goroutines*each)
	}
	childAdds := len(c.kill(t)) // kill fails the test if the child had ended by itself (an add failed)
	s, err := st.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if s[0].Scheduled < goroutines*each+int64(childAdds) {
		t.Errorf("%d tasks scheduled, want at least this process's %d and the other's %d", s[0].Scheduled, goroutines*each, childAdds)
	}
}
