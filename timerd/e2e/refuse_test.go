package e2e

import (
	"testing"

	"github.com/stretchr/testify/require"
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
