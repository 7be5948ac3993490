package api

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Flow control per callback origin (README.md, "Flow control"): the limits
// the workers of this process apply, read and changed at run time. A change
// is this process's: it is not stored, and it lasts until a restart, when
// -origin-limits applies again.

type limitJSON struct {
	Concurrency *int     `json:"concurrency"`
	Rate        *float64 `json:"rate"`
	Burst       *int     `json:"burst"`
}

var limitShape = shape{"concurrency": nil, "rate": nil, "burst": nil}

type originLimitJSON struct {
	Origin      string  `json:"origin"`
	Concurrency int     `json:"concurrency"`
	Rate        float64 `json:"rate"`
	Burst       int     `json:"burst"`
}

type originStateJSON struct {
	Origin      string  `json:"origin"`
	Running     int     `json:"running"`
	Waiting     int     `json:"waiting"`
	Breaker     string  `json:"breaker"`
	OpenUntil   *string `json:"open_until"`
	PausedUntil *string `json:"paused_until"`
}

type limitsJSON struct {
	Default originLimitJSON   `json:"default"`
	Breaker breakerJSON       `json:"breaker"`
	Origins []originLimitJSON `json:"origins"`
	State   []originStateJSON `json:"state"`
}

type breakerJSON struct {
	Failures    int    `json:"failures"`
	CoolDown    string `json:"cooldown"`
	MaxCoolDown string `json:"max_cooldown"`
}

func originLimit(origin string, l durable.Limit) originLimitJSON {
	return originLimitJSON{Origin: origin, Concurrency: l.Concurrency, Rate: l.Rate, Burst: l.Burst}
}

// listLimits: GET /v1/limits. The default, the breaker, the per-origin
// limits (sorted by origin), and the origins the workers are busy with.
func (h *handler) listLimits(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	f := h.cfg.Flow
	b := f.Breaker()
	out := limitsJSON{
		Default: originLimit("", f.Default()),
		Breaker: breakerJSON{Failures: b.Failures, CoolDown: b.CoolDown.String(), MaxCoolDown: b.MaxCoolDown.String()},
		Origins: []originLimitJSON{},
		State:   []originStateJSON{},
	}
	for o, l := range f.Limits() {
		out.Origins = append(out.Origins, originLimit(o, l))
	}
	slices.SortFunc(out.Origins, func(a, b originLimitJSON) int { return strings.Compare(a.Origin, b.Origin) })
	for _, s := range f.States() {
		out.State = append(out.State, originStateJSON{Origin: s.Key, Running: s.Running, Waiting: s.Waiting,
			Breaker: s.Breaker, OpenUntil: nonZeroTime(s.OpenUntil), PausedUntil: nonZeroTime(s.PausedUntil)})
	}
	slices.SortFunc(out.State, func(a, b originStateJSON) int { return strings.Compare(a.Origin, b.Origin) })
	return writeJSON(w, http.StatusOK, out)
}

func nonZeroTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	return jsonTime(t)
}

// pathOrigin reads {origin}, any http or https URL of it (escape its
// slashes: /v1/limits/https%3A%2F%2Fapi.example.com), as durable.Origin
// spells it.
func pathOrigin(r *http.Request) (string, error) {
	o, err := durable.Origin(r.PathValue("origin"))
	if err != nil {
		return "", invalid("origin", "origin must be an http or https URL such as https://api.example.com:443, with its slashes escaped")
	}
	return o, nil
}

// putLimit: PUT /v1/limits/{origin}. The body's fields replace the origin's
// limit; a field left out is 0, no limit. 200 with the limit.
func (h *handler) putLimit(w http.ResponseWriter, r *http.Request) error {
	origin, err := pathOrigin(r)
	if err != nil {
		return err
	}
	var req limitJSON
	if err := decodeBody(w, r, h.cfg.MaxBody, limitShape, &req); err != nil {
		return err
	}
	var l durable.Limit
	if req.Concurrency != nil {
		l.Concurrency = *req.Concurrency
	}
	if req.Rate != nil {
		l.Rate = *req.Rate
	}
	if req.Burst != nil {
		l.Burst = *req.Burst
	}
	switch {
	case l.Concurrency < 0:
		return invalid("concurrency", "concurrency must be 0 (no limit) or more")
	case l.Rate < 0 || l.Rate > 1e9:
		return invalid("rate", "rate must be 0 (no limit) to 1e9 per second")
	case l.Burst < 0:
		return invalid("burst", "burst must be 0 or more")
	}
	if err := h.cfg.Flow.SetLimit(origin, l); err != nil {
		return invalid("", "%v", err)
	}
	return writeJSON(w, http.StatusOK, originLimit(origin, l))
}

// deleteLimit: DELETE /v1/limits/{origin}. The origin gets the default
// limit again; 404 if it had none of its own.
func (h *handler) deleteLimit(w http.ResponseWriter, r *http.Request) error {
	origin, err := pathOrigin(r)
	if err != nil {
		return err
	}
	if _, ok := h.cfg.Flow.Limits()[origin]; !ok {
		return notFound("no limit of its own for %s", origin)
	}
	h.cfg.Flow.DeleteLimit(origin)
	return writeJSON(w, http.StatusOK, map[string]bool{"deleted": true})
}
