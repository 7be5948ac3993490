package auth

import (
	"context"
	"log/slog"
)

// AuditMessage is the message of every audit line, so that one filter on
// the log (msg="audit") finds every change made through timerd.
const AuditMessage = "audit"

// Audit writes the audit line of an action by the request of ctx: INFO
// AuditMessage with the credential's name and role (what Wrap or the
// dashboard's login check put in ctx; "-" when there is none), the action,
// and args (slog's key-value pairs: the task key, the outcome). It is the
// one audit mechanism: the API writes one line per request to a route that
// changes something (its status says whether it was done or refused; the
// command line goes through the API, so its changes are there too), the
// dashboard one per action it carries out.
func Audit(ctx context.Context, log *slog.Logger, action string, args ...any) {
	name, role := "-", Role("-")
	if cr, ok := FromContext(ctx); ok {
		name, role = cr.Name, cr.Role
	}
	log.Log(ctx, slog.LevelInfo, AuditMessage,
		append([]any{"token", name, "role", string(role), "action", action}, args...)...)
}
