package dashboard

import (
	"net/http"
	"net/url"
	"strings"
)

// sameOrigin refuses, with 403, every request that may change something (any
// method but GET, HEAD and OPTIONS) unless the browser says it comes from a
// page of this origin. That is the dashboard's defence against cross-site
// request forgery, beside the session cookie's SameSite=Strict.
//
// Why both: SameSite=Strict alone stops a browser from sending the cookie
// with a request started by another site, so a forged Requeue arrives
// logged out. But "site" is the registrable domain: a page on
// evil.example.com is same-site to timerd.example.com and gets the cookie
// sent; and a browser that predates SameSite sends it everywhere. The
// origin check closes both, with no state: no token to store, derive,
// rotate or forget to put in a form, and no JavaScript. It is what Go 1.25's
// http.CrossOriginProtection does; the module stays on go 1.24, hence this.
//
// The checks, first match wins:
//
//   - Sec-Fetch-Site (sent by every current browser, and no page can forge
//     it): "same-origin" passes, anything else ("same-site", "cross-site",
//     "none") is refused. It also survives a reverse proxy that rewrites Host.
//   - Origin (sent by browsers with every POST since about 2020): its host
//     must be the request's Host; "null" (a sandboxed or privacy-stripped
//     origin) is refused.
//   - Referer (what older browsers send; our Referrer-Policy same-origin
//     keeps it on our own POSTs): its host must be the Host.
//   - None of them: refused. A browser always sends one of the three on a
//     form POST; a script with the token has no need of the dashboard's
//     forms, it has the /v1/ API.
func (d *dashboard) sameOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead, http.MethodOptions:
			next.ServeHTTP(w, r)
			return
		}
		if why := crossOrigin(r); why != "" {
			d.Log.Warn("dashboard: refused a cross-origin request", "method", r.Method,
				"path", r.URL.Path, "why", why, "remote", r.RemoteAddr)
			d.fail(w, r, http.StatusForbidden, "Refused: this form was not sent from a page of this dashboard ("+why+"). Reload the page and try again.")
			return
		}
		next.ServeHTTP(w, r)
	})
}

// crossOrigin says why r may not come from this origin, or "" if it does.
func crossOrigin(r *http.Request) string {
	if site := r.Header.Get("Sec-Fetch-Site"); site != "" {
		if site == "same-origin" {
			return ""
		}
		return "Sec-Fetch-Site is " + site
	}
	if o := r.Header.Get("Origin"); o != "" {
		if sameHost(o, r.Host) {
			return ""
		}
		return "Origin is " + o
	}
	if ref := r.Header.Get("Referer"); ref != "" {
		if sameHost(ref, r.Host) {
			return ""
		}
		return "Referer is another site"
	}
	return "no Sec-Fetch-Site, Origin or Referer header"
}

// sameHost reports whether the URL u (an origin or a referrer) names host,
// which is host[:port] as in a Host header. The scheme is not compared: a
// TLS-terminating proxy in front of timerd makes it differ legitimately.
func sameHost(u, host string) bool {
	p, err := url.Parse(u)
	return err == nil && p.Host != "" && strings.EqualFold(p.Host, host)
}
