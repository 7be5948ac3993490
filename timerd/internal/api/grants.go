package api

import (
	"fmt"
	"net/http"

	"github.com/go-timingwheel/timingwheel/timerd/internal/apierror"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// grants is what each operation (route.op) needs of the caller's role
// (auth.Role.s table). Every route has an entry: permit panics in New
// for one without.
var grants = map[string]auth.Grant{
	"listTasks": auth.GrantRead, "getTask": auth.GrantRead, "listDead": auth.GrantRead,
	"listSchedules": auth.GrantRead, "getSchedule": auth.GrantRead, "stats": auth.GrantRead,
	"listLimits": auth.GrantRead,

	"completeTask": auth.GrantComplete, "failTask": auth.GrantComplete,

	"createTask": auth.GrantOperate, "cancelTask": auth.GrantOperate, "rescheduleTask": auth.GrantOperate,
	"requeueDead": auth.GrantOperate, "putSchedule": auth.GrantOperate, "deleteSchedule": auth.GrantOperate,
	"pause": auth.GrantOperate, "resume": auth.GrantOperate,

	"putLimit": auth.GrantAdmin, "deleteLimit": auth.GrantAdmin,
}

// permit answers 403 permission_denied to a request whose credential
// (auth.FromContext) lacks op's grant, naming the credential and its
// role, and passes the rest to serve. A request without a credential in
// its context did not come through auth.Checker.Wrap (an API mounted
// without it, as in this package's tests) and is let through.
func permit(op string, serve func(w http.ResponseWriter, r *http.Request) error) func(w http.ResponseWriter, r *http.Request) error {
	g, ok := grants[op]
	if !ok {
		panic("api: no grant for operation " + op)
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		if cr, ok := auth.FromContext(r.Context()); ok && !cr.Role.Can(g) {
			return &apiError{apierror.PermissionDenied, "", fmt.Sprintf("the token %q (role %s) may not %s", cr.Name, cr.Role, op)}
		}
		return serve(w, r)
	}
}
