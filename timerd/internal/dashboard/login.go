package dashboard

import (
	"fmt"
	"net/http"
	"time"

	"github.com/go-timingwheel/timingwheel/timerd/internal/auth"
)

// maxForm bounds the body of every form the dashboard takes: a token or a
// task key (durable.MaxKeyLen) and a word, URL-encoded.
const maxForm = 16 << 10

// loggedIn passes r to next if it carries a credential (auth.Checker.Identify:
// the session cookie, or a bearer header) whose role may do what r does,
// and sends the browser to the login page if it carries none. Every page is
// a read (auth.GrantRead); every POST but logout and the display
// preferences is an action (auth.GrantOperate): a read-only token sees
// every page, without the buttons and links of actions (render's
// mayOperate), and gets 403 for an action posted anyway.
func (d *dashboard) loggedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cr, ok := d.Auth.Identify(r)
		if !ok {
			http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
			return
		}
		need := auth.GrantRead
		if r.Method == http.MethodPost && r.URL.Path != "/ui/logout" && r.URL.Path != "/ui/prefs" {
			need = auth.GrantOperate
		}
		if !cr.Role.Can(need) {
			d.Log.Warn("dashboard: refused to the token's role", "token", cr.Name, "role", cr.Role, "method", r.Method, "path", r.URL.Path)
			d.fail(w, r, http.StatusForbidden, "The token "+cr.Name+" ("+string(cr.Role)+") may not do this.")
			return
		}
		next.ServeHTTP(w, r.WithContext(auth.WithCredential(r.Context(), cr)))
	})
}

type loginData struct {
	Wrong bool // the last attempt gave a wrong token
}

// Session is how long the session cookie a login gets lasts, as the page
// says it: auth.SessionTTL.
func (loginData) Session() string { return humanDuration(auth.SessionTTL) }

// humanDuration spells d in whole hours, or minutes below an hour.
func humanDuration(d time.Duration) string {
	if d >= time.Hour && d%time.Hour == 0 {
		if d == time.Hour {
			return "1 hour"
		}
		return fmt.Sprintf("%d hours", d/time.Hour)
	}
	return fmt.Sprintf("%d minutes", d/time.Minute)
}

// loginForm shows the token form, or the overview to a browser that is
// already logged in.
func (d *dashboard) loginForm(w http.ResponseWriter, r *http.Request) {
	if d.Auth.Valid(r) {
		http.Redirect(w, r, "/ui/", http.StatusSeeOther)
		return
	}
	d.render(w, r, http.StatusOK, "login", "Log in", loginData{})
}

// login checks the token typed into the form; if it is right, the browser
// gets a session cookie (auth.Checker.SetSession: signed by a key derived
// from the token, good for auth.SessionTTL, HttpOnly, SameSite=Strict) and
// goes to the overview. A wrong token gets the
// form again with 401, and a log line: the token should be long enough that
// guessing is hopeless, and the log is where an operator sees someone try.
func (d *dashboard) login(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxForm)
	if err := r.ParseForm(); err != nil {
		d.fail(w, r, http.StatusBadRequest, "Unreadable form: "+err.Error())
		return
	}
	cr, ok := d.Auth.Lookup(r.PostForm.Get("token"))
	if !ok || !cr.Role.Can(auth.GrantRead) {
		// A completion token reads nothing: it is no dashboard login.
		d.Log.Warn("dashboard: wrong token at login", "remote", r.RemoteAddr)
		d.render(w, r, http.StatusUnauthorized, "login", "Log in", loginData{Wrong: true})
		return
	}
	if !d.Auth.Open() {
		d.Auth.SetSessionAs(w, r, cr)
	}
	http.Redirect(w, r, "/ui/", http.StatusSeeOther)
}

// logoutForm is the page of a GET /ui/logout: the button that POSTs it.
func (d *dashboard) logoutForm(w http.ResponseWriter, r *http.Request) {
	d.render(w, r, http.StatusOK, "logout", "Log out", nil)
}

// logout clears the session cookie in this browser (a copy elsewhere stays
// good until it expires: auth's package doc). It is a POST (a button on
// every page), so that another site cannot log an operator out with a link.
func (d *dashboard) logout(w http.ResponseWriter, r *http.Request) {
	d.Auth.ClearSession(w)
	http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
}
