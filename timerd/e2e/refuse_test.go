package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/timerd/internal/pgtest"
)

// timerd refuses to start on an address every interface listens on without
// a token, and on a bad flag: exit code 2 and a message that says why.
func TestRefusesToStart(t *testing.T) {
	for _, tc := range []struct {
		args []string
		msg  string
	}{
		{[]string{"-listen", "0.0.0.0:0"}, "needs a token"},
		{[]string{"-listen", ":0"}, "needs a token"},
		{[]string{"-shards", "0"}, "-shards"},
	} {
		code, out := run(t, environ(), tc.args...)
		require.Equal(t, 2, code, "%v: %s", tc.args, out)
		require.Contains(t, out, tc.msg)
	}
}

// timerd never migrates a PostgreSQL store by itself: on a database that
// `timerd migrate` did not prepare it refuses to start, and says what to run.
func TestRefusesUnmigratedPostgres(t *testing.T) {
	url := pgtest.Schema(t)
	code, out := run(t, environ(), "-listen", "127.0.0.1:0", "-store", url)
	require.Equal(t, 2, code, out)
	require.Contains(t, out, "timerd migrate")
}
