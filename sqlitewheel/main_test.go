package sqlitewheel

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// A child process of crash_test.go runs its part and is killed there;
	// it never returns here.
	if os.Getenv(childEnv) != "" {
		os.Exit(runChild())
	}
	goleak.VerifyTestMain(m)
}

// patience bounds every wait of a test on something that should happen soon:
// generous, so that a loaded machine never trips it, and finite, so that a
// broken feature fails the test with a message instead of hanging it.
const patience = 30 * time.Second

// openTemp opens a store on a fresh file in t's temporary directory, closed
// when t ends, and returns it with the file's path.
func openTemp(t testing.TB, opts Options) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tasks.db")
	return openAt(t, path, opts), path
}

// openAt opens the store at path, closed when t ends.
func openAt(t testing.TB, path string, opts Options) *Store {
	t.Helper()
	st, err := Open(context.Background(), path, opts)
	if err != nil {
		t.Fatalf("Open %s: %v", path, err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return st
}
