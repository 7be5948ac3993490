package dashboard

import (
	"net/http"

	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// Confirmation steps. An action that cannot be undone, or that stops or
// floods deliveries (Cancel, Pause, Resume, and the bulk actions on the dead
// set) is a GET of its path first, which only shows a page saying what will
// happen, to how many tasks, with the form that does it; the form carries
// confirm=yes, and a POST without it is refused (400) and changes nothing.
// So no button elsewhere, and no form another tab left behind, acts in one
// click. Requeue of one task, which only makes it due again, has none.

// confirmData is the confirmation page's.
type confirmData struct {
	Question string   // what will happen, as a question: user data, escaped
	Explain  string   // its consequences
	Items    []string // the tasks it acts on, when they are few enough to list: user data, escaped
	Action   string   // the path the form POSTs to
	Fields   []field  // the form's hidden fields, confirm=yes added by the template
	Button   string   // the button's text
	Back     string   // where "Back" leads: a page of the dashboard
	Nothing  bool     // there is nothing to do: no form, only Back
}

type field struct{ Name, Value string }

// confirmed parses r's form and reports whether it carries confirm=yes; if
// not, it has answered r with a 400.
func (d *dashboard) confirmed(w http.ResponseWriter, r *http.Request) bool {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		d.fail(w, r, http.StatusBadRequest, "Unreadable form: "+err.Error())
		return false
	}
	if r.PostForm.Get("confirm") != "yes" {
		d.fail(w, r, http.StatusBadRequest, "Nothing done: this action asks for confirmation. Open "+r.URL.Path+" and confirm there.")
		return false
	}
	return true
}

// confirm renders the confirmation page. A reader whose role may not act
// (loggedIn would refuse the POST) gets it without the form, told why: no
// page shows a button its reader may not use.
func (d *dashboard) confirm(w http.ResponseWriter, r *http.Request, title string, c confirmData) {
	if cr, ok := auth.FromContext(r.Context()); ok && !cr.Role.Can(auth.GrantOperate) {
		c.Explain = "The token " + cr.Name + " (" + string(cr.Role) + ") may not do this: it can read only."
		c.Nothing, c.Items = true, nil
	}
	d.render(w, r, http.StatusOK, "confirm", title, c)
}
