// Package dashboard is timerd's web page under /ui/: server-rendered
// html/template, inline CSS, no JavaScript, no build step. It reads and
// steers the durable Queue directly; it does not go through the /v1/ API.
//
// Pages (every one but /ui/login redirects to /ui/login unless the request
// is auth.Checker.Valid):
//
//	GET  /ui/                 overview: deliveries per minute (chart.go), the Queue's Stats, in total and per partition
//	GET  /ui/tasks?state=S    one state's tasks, 50 a page (Queue.List; &cursor= for the next),
//	                          one-off tasks or schedule runs (kind=), by key prefix and error
//	                          text (prefix=, error=): filter.go
//	GET  /ui/dead             the dead set, with Requeue and Cancel per task, and the bulk actions
//	GET  /ui/task?key=K       one task (Queue.Get), its request and its delivery log; 404 for an unknown key
//	GET  /ui/schedules        the periodic schedules with their next run; /ui/schedule?name=N
//	                          one schedule and its recent runs
//	POST /ui/requeue          key=K&from=dead|task: Queue.Requeue, then back with the outcome
//	POST /ui/complete         key=K&token=T&outcome=done|fail(&error=E&permanent=yes): a task
//	                          waiting on a 202 completed or failed, Queue.Complete: complete.go
//	GET  /ui/cancel           key=K&from=dead|task: the confirmation; its POST (confirm=yes)
//	                          Queue.Cancel, then back with the outcome
//	GET  /ui/pause, /ui/resume  the confirmation; POST (confirm=yes) Queue.Pause or Resume
//	GET  /ui/dead/requeue-all, /ui/dead/cancel-all  the confirmation with the count;
//	                          POST (confirm=yes, n=count) acts on at most n dead tasks: bulk.go
//	GET  /ui/select           state=S, the list's filter, op=requeue|run-now|reschedule|cancel
//	                          (delay=D), scope=selected (key=K...) or all: the confirmation with
//	                          the count; POST (confirm=yes, n=count for all) acts: select.go
//	POST /ui/prefs            zone=Z and/or refresh=on|off: the display preferences' cookies (prefs.go)
//	GET  /ui/login            the token form; POST sets the session cookie
//	POST /ui/logout           clears it (GET shows the button)
//
// Times are shown in the zone the operator picked (UTC by default) with how
// long ago or ahead they are; list pages reload themselves (a meta refresh,
// no script) while auto-refresh is on.
//
// States in URLs are spelled as in the /v1/ API (in_flight, not "in flight").
// Every POST must come from a page of this dashboard: see sameOrigin
// (csrf.go). Every response carries a Content-Security-Policy that allows no
// script at all, X-Frame-Options DENY and nosniff (headers.go). Every task
// key, error and other value from the store is user data: html/template escapes
// it for the context it lands in.
package dashboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
)

// ErrConfig reports a Config that New cannot work with.
var ErrConfig = errors.New("dashboard: bad config")

// Config is what the dashboard needs.
type Config struct {
	Queue *durable.Queue // required
	Auth  *auth.Checker  // required; an Open Checker lets everyone in
	// Namespace is shown in every page's title bar, so that an operator
	// knows which wheel they are steering; it is not used for the store.
	Namespace string
	Log       *slog.Logger // store errors and refused requests; nil: discarded
	// Schedules are the periodic schedules the schedule pages show; nil:
	// those pages say there are none to show.
	Schedules *schedules.Store
	// Payload reads a task's stored payload, for the request a task's page
	// shows; nil: the store's own Payload method if it has one (each of
	// timerd's stores has), else no request is shown.
	Payload func(ctx context.Context, key string) ([]byte, error)
	// Flow is the workers' flow control per origin (durable.HTTPOrigin
	// keys): the overview lists its origins, a task page says why a task in
	// flight waits. nil: neither is shown.
	Flow *durable.Flow
	// Throughput counts this process's deliveries per minute, for the
	// overview's chart; it must be an Observer of the Queue's (the server
	// adds it). nil: no chart.
	Throughput *Throughput
	// VerifyCompletion checks the completion token typed into a detached
	// task's form and returns the delivery's durable token
	// (completion.Keys.Verify, as the API's); nil: the token is durable's
	// own.
	VerifyCompletion func(taskKey, credential string) (string, error)
}

// dashboard serves the pages; its fields are set by New and read only.
type dashboard struct {
	Config
	pages pages
	now   func() time.Time // the clock of relative times and schedules' next runs
}

// New returns the handler of every path under /ui/ (full paths: mount it at
// "/ui/" on the server's mux). It checks cfg and makes no call to the store; the
// errors it returns wrap ErrConfig.
func New(cfg Config) (http.Handler, error) {
	if cfg.Queue == nil {
		return nil, fmt.Errorf("%w: nil Queue", ErrConfig)
	}
	if cfg.Auth == nil {
		return nil, fmt.Errorf("%w: nil Auth", ErrConfig)
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	p, err := parsePages()
	if err != nil {
		return nil, err
	}
	if cfg.Payload == nil {
		if st, ok := cfg.Queue.Store().(interface {
			Payload(ctx context.Context, key string) ([]byte, error)
		}); ok {
			cfg.Payload = st.Payload
		}
	}
	d := &dashboard{Config: cfg, pages: p, now: time.Now}

	mux := http.NewServeMux()
	mux.HandleFunc("GET /ui/login", d.loginForm)
	mux.HandleFunc("POST /ui/login", d.login)
	mux.Handle("GET /ui/logout", d.loggedIn(http.HandlerFunc(d.logoutForm)))
	mux.Handle("POST /ui/logout", d.loggedIn(http.HandlerFunc(d.logout)))
	mux.Handle("GET /ui/{$}", d.loggedIn(http.HandlerFunc(d.overview)))
	mux.Handle("GET /ui/tasks", d.loggedIn(http.HandlerFunc(d.tasks)))
	mux.Handle("GET /ui/dead", d.loggedIn(http.HandlerFunc(d.dead)))
	mux.Handle("GET /ui/task", d.loggedIn(http.HandlerFunc(d.task)))
	mux.Handle("POST /ui/requeue", d.loggedIn(http.HandlerFunc(d.requeue)))
	mux.Handle("POST /ui/complete", d.loggedIn(http.HandlerFunc(d.complete)))
	mux.Handle("GET /ui/cancel", d.loggedIn(http.HandlerFunc(d.cancelForm)))
	mux.Handle("POST /ui/cancel", d.loggedIn(http.HandlerFunc(d.cancel)))
	mux.Handle("GET /ui/pause", d.loggedIn(http.HandlerFunc(d.pauseForm)))
	mux.Handle("POST /ui/pause", d.loggedIn(http.HandlerFunc(d.pause)))
	mux.Handle("GET /ui/resume", d.loggedIn(http.HandlerFunc(d.resumeForm)))
	mux.Handle("POST /ui/resume", d.loggedIn(http.HandlerFunc(d.resume)))
	mux.Handle("GET /ui/select", d.loggedIn(http.HandlerFunc(d.selectForm)))
	mux.Handle("POST /ui/select", d.loggedIn(http.HandlerFunc(d.selectDo)))
	mux.Handle("GET /ui/dead/{op}", d.loggedIn(http.HandlerFunc(d.bulkForm)))
	mux.Handle("POST /ui/dead/{op}", d.loggedIn(http.HandlerFunc(d.bulk)))
	mux.Handle("GET /ui/schedules", d.loggedIn(http.HandlerFunc(d.schedules)))
	mux.Handle("GET /ui/schedule", d.loggedIn(http.HandlerFunc(d.schedule)))
	mux.Handle("POST /ui/prefs", d.loggedIn(http.HandlerFunc(d.setPrefs)))
	mux.Handle("/ui/", d.loggedIn(http.HandlerFunc(d.notFound)))
	mux.Handle("GET /ui", http.RedirectHandler("/ui/", http.StatusMovedPermanently))
	// sameOrigin before anything else, so that a cross-site POST learns
	// nothing, not even whether its session was valid.
	return securityHeaders(d.sameOrigin(mux)), nil
}
