package sqlitewheel

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/stretchr/testify/require"
)

// A brand-new file is migrated by Open; a file of other tables is refused
// until Migrate adds the schema; a newer file is refused by Open and Migrate
// and left untouched; Migrate on a current file changes nothing.
func TestSchemaVersions(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()

	fresh := filepath.Join(dir, "fresh.db")
	st := openAt(t, fresh, Options{})
	v, err := FileSchemaVersion(ctx, fresh)
	require.NoError(t, err)
	require.Equal(t, SchemaVersion, v, "Open migrates a brand-new file")
	require.NoError(t, Migrate(ctx, fresh, Options{}), "Migrate on a current file")
	require.NoError(t, st.Close())

	other := filepath.Join(dir, "other.db")
	execFile(t, other, `CREATE TABLE orders (id INTEGER PRIMARY KEY)`)
	_, err = Open(ctx, other, Options{})
	require.ErrorIs(t, err, ErrSchemaTooOld, "a file with tables of its own is never migrated by Open")
	require.NoError(t, Migrate(ctx, other, Options{}))
	openAt(t, other, Options{})

	newer := filepath.Join(dir, "newer.db")
	openAt(t, newer, Options{}).Close()
	execFile(t, newer, `INSERT INTO sqlitewheel_schema (version, applied) VALUES (999, 0)`)
	_, err = Open(ctx, newer, Options{})
	require.ErrorIs(t, err, ErrSchemaTooNew)
	require.ErrorIs(t, Migrate(ctx, newer, Options{}), ErrSchemaTooNew)
	v, err = FileSchemaVersion(ctx, newer)
	require.NoError(t, err)
	require.Equal(t, 999, v)
}

// execFile runs stmt on the file at path through a connection of its own.
func execFile(t *testing.T, path, stmt string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	defer db.Close()
	_, err = db.Exec(stmt)
	require.NoError(t, err)
}

// Bad paths and options are ErrOptions; a file that is not a database is
// unrecoverable, so a Run on it would end instead of retrying forever.
func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, path := range []string{"", ":memory:", "file:x.db", "a?b.db"} {
		_, err := Open(ctx, path, Options{})
		require.ErrorIs(t, err, ErrOptions, "path %q", path)
	}
	dir := t.TempDir()
	_, err := Open(ctx, filepath.Join(dir, "x.db"), Options{Namespace: string(make([]byte, MaxNamespaceLen+1))})
	require.ErrorIs(t, err, ErrOptions)
	_, err = Open(ctx, filepath.Join(dir, "x.db"), Options{BusyTimeout: -1})
	require.ErrorIs(t, err, ErrOptions)

	junk := filepath.Join(dir, "junk.db")
	require.NoError(t, os.WriteFile(junk, []byte("this is not a database file, not at all, no"), 0o600))
	_, err = Open(ctx, junk, Options{})
	require.Error(t, err)
	require.True(t, errors.Is(err, durable.ErrUnrecoverable), "%v", err)

	_, err = Open(ctx, filepath.Join(dir, "missing", "dir", "x.db"), Options{})
	require.ErrorIs(t, err, durable.ErrUnrecoverable)

	st, _ := openTemp(t, Options{})
	require.NoError(t, st.Close())
	_, err = st.Claim(ctx, 0, 1, durable.MinLease, limits)
	require.ErrorIs(t, err, durable.ErrUnrecoverable, "an operation after Close")
}
