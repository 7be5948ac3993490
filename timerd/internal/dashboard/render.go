package dashboard

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

//go:embed templates/*.html
var templateFS embed.FS

// style is every page's CSS, inlined by layout.html and allowed by its hash
// in the CSP (headers.go).
//
//go:embed templates/style.css
var style string

// pageNames are the templates under templates/, each a "content" block that
// layout.html wraps; parts.html holds the blocks several pages share.
var pageNames = []string{"login", "logout", "overview", "tasks", "dead", "task", "error",
	"confirm", "schedules", "schedule"}

// refreshing are the pages that reload themselves (a meta refresh, no
// script) while the operator has auto-refresh on: the ones that watch
// numbers move. A task's page and the forms do not, so that a reload never
// loses what is being read or typed.
var refreshing = map[string]bool{"overview": true, "tasks": true, "dead": true, "schedules": true, "schedule": true}

// pages holds each page's template set: layout.html, parts.html and the
// page, parsed once and never executed: render clones it, so that each page
// gets the formatting funcs of its request (its zone and its now).
type pages map[string]*template.Template

func parsePages() (pages, error) {
	p := pages{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(formatting(time.UTC, time.Time{}, 0, false)).ParseFS(templateFS,
			"templates/layout.html", "templates/parts.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard: template %s: %w", name, err)
		}
		p[name] = t
	}
	return p, nil
}

// formatting returns the templates' formatting helpers for one page: times
// in loc, to the millisecond, with how far they are from now (the
// dashboard's clock, not the store's: the two may differ by their skew);
// attempts as n/max, maxAttempts being the Queue's for a task without its
// own. mayOperate reports operate: whether the page's reader may act
// (auth.GrantOperate), so that a page shows the buttons and links of
// actions only to a role that may use them; loggedIn refuses the actions
// themselves (403) to the others all the same.
func formatting(loc *time.Location, now time.Time, maxAttempts int, operate bool) template.FuncMap {
	return template.FuncMap{
		"mayOperate": func() bool { return operate },
		"when": func(t time.Time) string {
			if t.IsZero() {
				return "—"
			}
			return t.In(loc).Format("2006-01-02 15:04:05.000Z07:00") + ", " + relative(t, now)
		},
		"dur":          func(d time.Duration) string { return d.Round(time.Millisecond).String() },
		"clock":        func(t time.Time) string { return t.In(loc).Format("15:04") },
		"slug":         stateSlug,
		"kinds":        func() []kindName { return kindNames },
		"one":          func(r schedRun) []schedRun { return []schedRun{r} },
		"responseText": responseText,
		"attempts": func(info durable.TaskInfo) string {
			m := info.MaxAttempts
			if m == 0 {
				m = maxAttempts
			}
			return fmt.Sprintf("%d/%d", info.Attempts, m)
		},
	}
}

// page is what layout.html renders around every page's content.
type page struct {
	Title     string
	Namespace string
	Nav       bool // show the navigation, search and preferences: r is Valid
	Logout    bool // show the logout button: Nav, and there is a token
	Style     template.CSS
	Prefs     prefs
	Back      string // this page's path and query, for the preference forms
	Refresh   bool   // this page reloads itself (refreshing, and Prefs.Refresh)
	CanReload bool   // this page is one of refreshing: show the toggle
	Zones     []string
	Body      any // the page's own data
}

// render writes the page called name with status. It renders into a buffer
// first, so that a template failure is a 500 and never half a page.
func (d *dashboard) render(w http.ResponseWriter, r *http.Request, status int, name, title string, body any) {
	var b bytes.Buffer
	cr, valid := d.Auth.Identify(r)
	pr := prefsOf(r)
	t, err := d.pages[name].Clone()
	if err == nil {
		t.Funcs(formatting(pr.loc, d.now(), d.Queue.Options().MaxAttempts, valid && cr.Role.Can(auth.GrantOperate)))
		err = t.ExecuteTemplate(&b, "layout", page{
			Title: title, Namespace: d.Namespace, Nav: valid, Logout: valid && !d.Auth.Open(),
			Style: template.CSS(style), Prefs: pr, Back: backOf(r), Refresh: refreshing[name] && pr.Refresh,
			CanReload: refreshing[name], Zones: zones, Body: body,
		})
	}
	if err != nil {
		d.Log.Error("dashboard: template", "page", name, "err", err)
		http.Error(w, "dashboard: template failed; see the log", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// errorData is the error page's: a status and a message (which may hold user
// data; the template escapes it).
type errorData struct {
	Status  int
	Message string
}

// fail renders the error page.
func (d *dashboard) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	d.render(w, r, status, "error", http.StatusText(status), errorData{Status: status, Message: msg})
}

// failStore renders a failed call to the store as a 503, and logs it.
func (d *dashboard) failStore(w http.ResponseWriter, r *http.Request, op string, err error) {
	d.Log.Error("dashboard: store", "op", op, "err", err)
	d.fail(w, r, http.StatusServiceUnavailable, op+" failed: "+err.Error())
}

// notFound answers every path under /ui/ that is no page.
func (d *dashboard) notFound(w http.ResponseWriter, r *http.Request) {
	d.fail(w, r, http.StatusNotFound, "No page "+r.URL.Path+" here.")
}
