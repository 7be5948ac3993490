package server

import (
	"context"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
	"github.com/go-timingwheel/timingwheel/timerd/internal/completion"
)

// checker checks the API's bearer tokens and the dashboard's sessions
// against every configured credential (config.Credentials; Parse checked
// them).
func (s *Server) checker() (*auth.Checker, error) {
	return auth.NewCredentials(s.cfg.Credentials())
}

// completionKeys are -completion-key-file's keys, else one derived from
// the first admin token (none: from "", on a loopback API open to all): the
// same in every process that shares the configuration, which must agree
// since any process may take a completion.
func (s *Server) completionKeys() *completion.Keys {
	if len(s.cfg.CompletionKeys) > 0 {
		return completion.New(s.cfg.CompletionKeys)
	}
	admin := ""
	for _, c := range s.cfg.Credentials() {
		if c.Role == auth.RoleAdmin {
			admin = c.Token
			break
		}
	}
	return completion.New([][]byte{completion.DeriveKey(admin)})
}

// mintCompletion gives every delivery the completion credential of its
// durable token (completion.Keys.Mint) as its Task.Token, which the HTTP
// handler sends in X-Completion-Token: a receiver holds a credential for
// its own delivery only, and the API takes no other (api.Config.VerifyCompletion).
func mintCompletion(h durable.Handler, keys *completion.Keys) durable.Handler {
	return func(ctx context.Context, t durable.Task) error {
		if t.Token != "" {
			t.Token = keys.Mint(t.Key, t.Attempt, t.Token)
		}
		return h(ctx, t)
	}
}
