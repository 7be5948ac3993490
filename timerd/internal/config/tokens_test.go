package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

func writeFile(t *testing.T, text string) string {
	p := filepath.Join(t.TempDir(), "f")
	require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
	return p
}

// -tokens-file's named tokens come after the admin token of -token-file or
// TIMERD_TOKEN; -completion-key-file's keys are read in order; bad files
// stop timerd naming the flag, never echoing a token.
func TestTokensFile(t *testing.T) {
	tokens := writeFile(t, "# name role token\nops operator 0123456789abcdef-ops\n\n  receiver\tcompletion 0123456789abcdef-rcv\n")
	keys := writeFile(t, strings.Repeat("k", 32)+"\n"+strings.Repeat("o", 40)+"\n")
	c, err := Parse([]string{"-tokens-file", tokens, "-completion-key-file", keys, "-listen", "0.0.0.0:8080"}, env(map[string]string{"TIMERD_TOKEN": "the-admin-token"}))
	require.NoError(t, err)
	assert.Equal(t, []auth.Credential{
		{Name: "admin", Role: auth.RoleAdmin, Token: "the-admin-token"},
		{Name: "ops", Role: auth.RoleOperator, Token: "0123456789abcdef-ops"},
		{Name: "receiver", Role: auth.RoleCompletion, Token: "0123456789abcdef-rcv"},
	}, c.Credentials())
	assert.Equal(t, [][]byte{[]byte(strings.Repeat("k", 32)), []byte(strings.Repeat("o", 40))}, c.CompletionKeys)

	_, err = Parse([]string{"-tokens-file", tokens, "-listen", "0.0.0.0:8080"}, env(nil))
	require.NoError(t, err, "a tokens file alone is enough for a public address")

	for _, tc := range []struct{ flag, text string }{
		{"-tokens-file", "ops operator\n"},
		{"-tokens-file", "ops root 0123456789abcdef-ops\n"},
		{"-tokens-file", "ops operator short-secret\n"},
		{"-tokens-file", "a operator 0123456789abcdef-aaa\na read-only 0123456789abcdef-bbb\n"},
		{"-tokens-file", "a operator 0123456789abcdef-aaa\nb read-only 0123456789abcdef-aaa\n"},
		{"-tokens-file", "# nothing\n"},
		{"-completion-key-file", "too-short-a-key\n"},
		{"-completion-key-file", "\n"},
	} {
		_, err := Parse([]string{tc.flag, writeFile(t, tc.text)}, env(nil))
		require.Error(t, err, tc.text)
		assert.Contains(t, err.Error(), tc.flag[1:], tc.text)
		assert.NotContains(t, err.Error(), "0123456789abcdef", "no token in the error")
	}
}
