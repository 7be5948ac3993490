package main

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// timerd runs the command line args without a server and returns its exit
// code, stdout and stderr.
func timerd(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(args, func(string) string { return "" }, &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

// help and version are commands, not server arguments.
func TestHelpAndVersion(t *testing.T) {
	code, out, errOut := timerd(t, "help")
	assert.Equal(t, 0, code, errOut)
	for _, cmd := range []string{"migrate", "tasks", "dead", "schedules", "receiver", "help", "version"} {
		assert.Contains(t, out, "timerd "+cmd, "help lists %s", cmd)
	}
	code, out, errOut = timerd(t, "version")
	assert.Equal(t, 0, code, errOut)
	assert.True(t, strings.HasPrefix(out, "timerd "), out)
	assert.Contains(t, out, "go1.", "the Go version")

	code, out, _ = timerd(t, "help", "tasks")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, "timerd tasks list")
}

// -h after a command shows that command's usage and flags only.
func TestSubcommandHelp(t *testing.T) {
	for _, tc := range []struct {
		args      []string
		has, hasn []string
	}{
		{[]string{"tasks", "-h"}, []string{"timerd tasks get", "timerd tasks list", "-server"}, []string{"timerd dead", "unknown command", "-allow-callback"}},
		{[]string{"tasks", "list", "-h"}, []string{"-state", "-limit", "-cursor", "-server", "-token-file"}, []string{"-all", "timerd dead", "-allow-callback"}},
		{[]string{"dead", "requeue", "-h"}, []string{"-all", "-server"}, []string{"-state", "-allow-callback"}},
		{[]string{"receiver", "-h"}, []string{"-listen"}, []string{"-server", "-allow-callback"}},
		{[]string{"migrate", "-h"}, []string{"-store", "-store-file", "-data-dir", "-namespace", "-redis-url"}, []string{"-concurrency", "-allow-callback", "-token-file"}},
	} {
		code, out, errOut := timerd(t, tc.args...)
		all := out + errOut
		assert.Equal(t, 0, code, "%v: %s", tc.args, all)
		for _, s := range tc.has {
			assert.Contains(t, all, s, "%v", tc.args)
		}
		for _, s := range tc.hasn {
			assert.NotContains(t, all, s, "%v", tc.args)
		}
	}
}

// Without -store, -data-dir or -redis-url (flag or variable), timerd does
// not make a data directory where it was started: it says how to name one
// and exits 2; a bare timerd shows its help too.
func TestNoSilentDataDir(t *testing.T) {
	t.Chdir(t.TempDir())
	for _, args := range [][]string{nil, {"-listen", "127.0.0.1:0"}, {"migrate"}} {
		code, out, errOut := timerd(t, args...)
		assert.Equal(t, 2, code, "%v: %s%s", args, out, errOut)
		assert.Contains(t, errOut, "-data-dir", "%v", args)
		_, err := os.Stat("timerd-data")
		assert.True(t, os.IsNotExist(err), "%v made ./timerd-data", args)
	}
	_, _, errOut := timerd(t)
	assert.Contains(t, errOut, "timerd help", "a bare timerd points at the help")
}
