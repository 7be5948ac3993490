package config

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// Credentials (README.md, "Tokens and roles"): the token of -token-file or
// TIMERD_TOKEN is the admin credential named "admin"; -tokens-file adds
// named tokens with roles (auth.Role); -completion-key-file holds the keys
// of the completion credentials (the completion package).

// The rows of README.md's configuration table for credentials, after the
// streams' (streams.go): if a row changes there, change it here.
var tokenSettings = []setting{
	{name: "tokens-file", env: "TIMERD_TOKENS_FILE",
		usage: "file of named bearer tokens, one a line: NAME ROLE TOKEN, ROLE one of admin, operator, read-only, completion (# starts a comment); beside -token-file's, named admin",
		apply: func(c *Config, v string) (err error) {
			if v != "" {
				c.Tokens, err = readTokens(v)
			}
			return err
		}},
	{name: "completion-key-file", env: "TIMERD_COMPLETION_KEY_FILE",
		usage: "file of the keys that sign completion credentials, one a line, 32 bytes or more: the first signs, every one verifies (rotation); default: a key derived from the admin token",
		apply: func(c *Config, v string) (err error) {
			if v != "" {
				c.CompletionKeys, err = readKeys(v)
			}
			return err
		}},
}

func init() { settings = append(settings, tokenSettings...) }

// MinCompletionKey is the shortest completion key -completion-key-file
// takes: 32 bytes, an HMAC-SHA256 key's own size.
const MinCompletionKey = 32

// readTokens reads a tokens file: lines of NAME ROLE TOKEN separated by
// spaces or tabs; blank lines and lines starting with # are skipped. Its
// errors name the line, never a token.
func readTokens(path string) ([]auth.Credential, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []auth.Credential
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("line %d: want NAME ROLE TOKEN, got %d fields", i+1, len(f))
		}
		role, err := auth.ParseRole(f[1])
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		if len(f[2]) < auth.MinTokenLen {
			return nil, fmt.Errorf("line %d: %q's token is under %d bytes", i+1, f[0], auth.MinTokenLen)
		}
		out = append(out, auth.Credential{Name: f[0], Role: role, Token: f[2]})
	}
	if len(out) == 0 {
		return nil, errors.New("no token in the file")
	}
	return out, nil
}

// readKeys reads a completion key file: one key a line, surrounding spaces
// dropped, blank lines and # comments skipped.
func readKeys(path string) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if len(line) < MinCompletionKey {
			return nil, fmt.Errorf("line %d: a key under %d bytes", i+1, MinCompletionKey)
		}
		out = append(out, []byte(line))
	}
	if len(out) == 0 {
		return nil, errors.New("no key in the file")
	}
	return out, nil
}

// Credentials returns every credential: -token-file's (or TIMERD_TOKEN's)
// first, as the admin named "admin", then -tokens-file's. None: the API is
// open (a loopback -listen only).
func (c Config) Credentials() []auth.Credential {
	var out []auth.Credential
	if c.Token != "" {
		out = append(out, auth.Credential{Name: "admin", Role: auth.RoleAdmin, Token: c.Token})
	}
	return append(out, c.Tokens...)
}

// checkCredentials refuses a name or token given twice (auth.NewCredentials).
func checkCredentials(c Config) error {
	if _, err := auth.NewCredentials(c.Credentials()); err != nil {
		return fmt.Errorf("config: -tokens-file (TIMERD_TOKENS_FILE): %w", err)
	}
	return nil
}

// tokensAttr shows the credentials' names and roles, never their tokens.
func (c Config) tokensAttr() string {
	if len(c.Tokens) == 0 {
		return "none"
	}
	parts := make([]string, len(c.Tokens))
	for i, t := range c.Tokens {
		parts[i] = t.Name + ":" + string(t.Role)
	}
	return strings.Join(parts, ",")
}

// completionKeyAttr says where the completion key comes from.
func (c Config) completionKeyAttr() string {
	if len(c.CompletionKeys) == 0 {
		return "derived from the admin token"
	}
	return fmt.Sprintf("%d keys from the file", len(c.CompletionKeys))
}
