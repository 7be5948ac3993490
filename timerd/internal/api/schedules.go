package api

import (
	"errors"
	"net/http"
	"time"

	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
)

type scheduleRequest struct {
	Name        string        `json:"name"`
	Every       string        `json:"every"`
	Cron        string        `json:"cron"`
	Callback    *callbackJSON `json:"callback"`
	MaxAttempts *int          `json:"max_attempts"`
}

var scheduleShape = shape{"name": nil, "every": nil, "cron": nil, "callback": callbackShape, "max_attempts": nil}

// putSchedule: POST /v1/schedules. 201 when new, 200 when it replaced one;
// the body is the schedule with created.
func (h *handler) putSchedule(w http.ResponseWriter, r *http.Request) error {
	var req scheduleRequest
	if err := decodeBody(w, r, h.cfg.MaxBody, scheduleShape, &req); err != nil {
		return err
	}
	auditSubject(r, "name", req.Name)
	d := schedules.Definition{Name: req.Name, Cron: req.Cron}
	if req.Every != "" {
		every, err := time.ParseDuration(req.Every)
		if err != nil {
			return invalid("every", "every must be a duration such as \"1h\"")
		}
		d.Every = every
	}
	if req.MaxAttempts != nil {
		if *req.MaxAttempts < 1 {
			return invalid("max_attempts", "max_attempts must be at least 1")
		}
		d.MaxAttempts = *req.MaxAttempts
	}
	// The definition's own checks first (name, timing), with a placeholder
	// callback, so that they are reported before the callback's.
	probe := d
	probe.Callback.URL, probe.Callback.Method = "http://h/", "GET"
	if err := probe.Validate(); err != nil {
		return definitionError(d, err)
	}
	cb, err := req.Callback.task(r.Context(), h.cfg.CheckCallback)
	if err != nil {
		return err
	}
	d.Callback = cb
	version, err := schedules.VersionOf(d)
	if err != nil {
		return definitionError(d, err)
	}
	created, err := h.cfg.Schedules.Put(r.Context(), d)
	if err != nil {
		return definitionError(d, err)
	}
	d.Version = version
	v := scheduleView(d)
	v.Created = &created
	if created {
		return writeJSON(w, http.StatusCreated, v)
	}
	return writeJSON(w, http.StatusOK, v)
}

// listSchedules: GET /v1/schedules, by name.
func (h *handler) listSchedules(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	defs, err := h.cfg.Schedules.List(r.Context())
	if err != nil {
		return err
	}
	out := make([]scheduleJSON, 0, len(defs))
	for _, d := range defs {
		out = append(out, scheduleView(d))
	}
	return writeJSON(w, http.StatusOK, map[string][]scheduleJSON{"schedules": out})
}

// pathName is the {name} of r's path, checked.
func pathName(r *http.Request) (string, error) {
	name := r.PathValue("name")
	if err := schedules.CheckName(name); err != nil {
		return "", invalid("name", "%v", err)
	}
	return name, nil
}

// getSchedule: GET /v1/schedules/{name}.
func (h *handler) getSchedule(w http.ResponseWriter, r *http.Request) error {
	name, err := pathName(r)
	if err != nil {
		return err
	}
	d, err := h.cfg.Schedules.Get(r.Context(), name)
	if errors.Is(err, schedules.ErrNotFound) {
		return notFound("no schedule under this name")
	}
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, scheduleView(d))
}

// deleteSchedule: DELETE /v1/schedules/{name}: no more runs (one already due
// may still run).
func (h *handler) deleteSchedule(w http.ResponseWriter, r *http.Request) error {
	name, err := pathName(r)
	if err != nil {
		return err
	}
	ok, err := h.cfg.Schedules.Delete(r.Context(), name)
	if err != nil {
		return err
	}
	if !ok {
		return notFound("no schedule under this name")
	}
	return writeJSON(w, http.StatusOK, map[string]bool{"deleted": true})
}
