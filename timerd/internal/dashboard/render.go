package dashboard

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"
	"time"
)

//go:embed templates/*.html
var templateFS embed.FS

// style is every page's CSS, inlined by layout.html and allowed by its hash
// in the CSP (headers.go).
//
//go:embed templates/style.css
var style string

// pageNames are the templates under templates/, each a "content" block that
// layout.html wraps.
var pageNames = []string{"login", "logout", "overview", "tasks", "dead", "task", "error"}

// pages holds each page's template set: layout.html and the page.
type pages map[string]*template.Template

func parsePages() (pages, error) {
	p := pages{}
	for _, name := range pageNames {
		t, err := template.New(name).Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard: template %s: %w", name, err)
		}
		p[name] = t
	}
	return p, nil
}

// funcs are the templates' formatting helpers. Times are by the Redis clock,
// shown in UTC to the millisecond as rediswheel keeps them.
var funcs = template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05.000Z")
	},
	"dur":          func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"slug":         stateSlug,
	"responseText": responseText,
}

// page is what layout.html renders around every page's content.
type page struct {
	Title     string
	Namespace string
	Nav       bool // show the navigation and search: r is Valid
	Logout    bool // show the logout button: Nav, and there is a token
	Style     template.CSS
	Body      any // the page's own data
}

// render writes the page called name with status. It renders into a buffer
// first, so that a template failure is a 500 and never half a page.
func (d *dashboard) render(w http.ResponseWriter, r *http.Request, status int, name, title string, body any) {
	var b bytes.Buffer
	valid := d.Auth.Valid(r)
	err := d.pages[name].ExecuteTemplate(&b, "layout", page{
		Title: title, Namespace: d.Namespace, Nav: valid, Logout: valid && !d.Auth.Open(),
		Style: template.CSS(style), Body: body,
	})
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

// failRedis renders a failed call to Redis as a 503, and logs it.
func (d *dashboard) failRedis(w http.ResponseWriter, r *http.Request, op string, err error) {
	d.Log.Error("dashboard: redis", "op", op, "err", err)
	d.fail(w, r, http.StatusServiceUnavailable, op+" failed: "+err.Error())
}

// notFound answers every path under /ui/ that is no page.
func (d *dashboard) notFound(w http.ResponseWriter, r *http.Request) {
	d.fail(w, r, http.StatusNotFound, "No page "+r.URL.Path+" here.")
}
