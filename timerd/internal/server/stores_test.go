package server

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// storeModules are the stores' import paths. timerd talks to durable.Queue
// everywhere; a store is named only where one is opened or migrated, and
// rediswheel also where timerd hands tasks to Redis Streams, which is a
// destination (any store may use one), not the store.
var storeModules = []string{
	"github.com/go-timingwheel/timingwheel/rediswheel",
	"github.com/go-timingwheel/timingwheel/pgwheel",
	"github.com/go-timingwheel/timingwheel/sqlitewheel",
}

// mayImport lists, by file from timerd's root, the stores a non-test file
// may import.
var mayImport = map[string][]string{
	"internal/server/backend.go":     {"rediswheel", "pgwheel", "sqlitewheel"}, // opens the store -store names
	"internal/server/migrate.go":     {"pgwheel", "sqlitewheel"},               // timerd migrate
	"internal/server/workers.go":     {"rediswheel"},                           // the Redis Streams handler
	"internal/api/stream.go":         {"rediswheel"},                           // the Redis Streams task's codec
	"internal/server/streamfence.go": {"rediswheel"},                           // reads the Redis Streams task's codec before an append
}

// Every non-test file of timerd imports a store only where mayImport allows
// (the API, the dashboard and the schedules held a *rediswheel.Queue on every
// store, and named its states and errors rediswheel's).
func TestStoresNamedOnlyWhereOpened(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	files := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		files++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, m := range storeModules {
				if p == m || strings.HasPrefix(p, m+"/") {
					assert.Contains(t, mayImport[rel], filepath.Base(m), "%s imports %s", rel, p)
				}
			}
		}
		return nil
	})
	require.NoError(t, err)
	assert.Greater(t, files, 50, "walked timerd's sources")
}

// The packages that serve tasks and schedules build without any store in
// their dependencies: what they know of a store is durable's.
func TestPackagesBuildWithoutStores(t *testing.T) {
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command in PATH")
	}
	pkgs := []string{"./internal/dashboard", "./internal/schedules", "./internal/config", "./internal/auth", "./internal/cli", "./internal/ssrf", "./internal/limit"}
	cmd := exec.Command(gobin, append([]string{"list", "-deps", "-f", "{{.ImportPath}}"}, pkgs...)...)
	cmd.Dir = filepath.Join("..", "..")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/go-timingwheel/timingwheel/durable", "go list answered")
	for _, d := range deps {
		for _, m := range storeModules {
			assert.False(t, d == m || strings.HasPrefix(d, m+"/"), "%v depend on %s", pkgs, d)
		}
	}
}
