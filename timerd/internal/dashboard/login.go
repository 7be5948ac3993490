package dashboard

import (
	"net/http"
)

// maxForm bounds the body of every form the dashboard takes: a token or a
// task key (durable.MaxKeyLen) and a word, URL-encoded.
const maxForm = 16 << 10

// loggedIn passes r to next if it carries the token (auth.Checker.Valid: the
// session cookie, or a bearer header) and sends the browser to the login
// page otherwise.
func (d *dashboard) loggedIn(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !d.Auth.Valid(r) {
			http.Redirect(w, r, "/ui/login", http.StatusSeeOther)
			return
		}
		next.ServeHTTP(w, r)
	})
}

type loginData struct {
	Wrong bool // the last attempt gave a wrong token
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
	if !d.Auth.Token(r.PostForm.Get("token")) {
		d.Log.Warn("dashboard: wrong token at login", "remote", r.RemoteAddr)
		d.render(w, r, http.StatusUnauthorized, "login", "Log in", loginData{Wrong: true})
		return
	}
	if !d.Auth.Open() {
		d.Auth.SetSession(w, r)
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
