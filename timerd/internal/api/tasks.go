package api

import (
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/search"
)

type createRequest struct {
	Key         string        `json:"key"`
	DueAt       *string       `json:"due_at"`
	Delay       *string       `json:"delay"`
	Callback    *callbackJSON `json:"callback"`
	Stream      *streamJSON   `json:"stream"`
	MaxAttempts *int          `json:"max_attempts"`
}

var createShape = shape{"key": nil, "due_at": nil, "delay": nil, "callback": callbackShape, "stream": streamShape,
	"max_attempts": nil}

// raceRetries bounds how often a handler reads again a task that changed
// between two of its calls (finished and forgotten between an Add that found
// it and the Get that reads it); past it the answer is 409.
const raceRetries = 3

// createTask: POST /v1/tasks. 201 with the task and created:true when stored;
// 200 with the existing task and created:false when the key has one (it is
// left as it is, whatever the request says).
func (h *handler) createTask(w http.ResponseWriter, r *http.Request) error {
	var req createRequest
	if err := decodeBody(w, r, h.cfg.MaxBody, createShape, &req); err != nil {
		return err
	}
	auditSubject(r, "key", req.Key)
	if err := checkNewKey(req.Key); err != nil {
		return err
	}
	due, err := parseWhen(req.DueAt, req.Delay)
	if err != nil {
		return err
	}
	var opts []durable.TaskOption
	if req.MaxAttempts != nil {
		if *req.MaxAttempts < 1 {
			return invalid("max_attempts", "max_attempts must be at least 1")
		}
		opts = append(opts, durable.TaskMaxAttempts(*req.MaxAttempts))
	}
	if err := checkKind(req.Callback, req.Stream); err != nil {
		return err
	}
	tp, err := requestTraceparent(r, req.Callback)
	if err != nil {
		return err
	}
	var task durable.HTTPTask
	var stream streamTask
	var streamPayload []byte // set for a stream task
	if req.Stream != nil {
		if stream, streamPayload, err = req.Stream.payload(h.cfg.Streams, h.cfg.CheckStream, tp); err != nil {
			return err
		}
		opts = append(opts, durable.TaskType(streamTaskType))
	} else if task, err = req.Callback.task(r.Context(), h.cfg.CheckCallback); err != nil {
		return err
	}
	if tp != "" && req.Callback != nil {
		task.Header = task.Header.Clone()
		if task.Header == nil {
			task.Header = http.Header{}
		}
		task.Header.Set(traceHeader, tp)
	}
	ctx := r.Context()
	for range raceRetries {
		var added bool
		switch {
		case streamPayload != nil && due.relative:
			added, err = h.cfg.Queue.AddAfter(ctx, req.Key, streamPayload, due.delay, opts...)
		case streamPayload != nil:
			added, err = h.cfg.Queue.Add(ctx, req.Key, streamPayload, due.at, opts...)
		case due.relative:
			added, err = h.cfg.Queue.AddHTTPAfter(ctx, req.Key, task, due.delay, opts...)
		default:
			added, err = h.cfg.Queue.AddHTTP(ctx, req.Key, task, due.at, opts...)
		}
		if err != nil {
			return addError(task, err)
		}
		info, err := h.cfg.Queue.Get(ctx, req.Key)
		if errors.Is(err, durable.ErrNotFound) {
			if !added {
				continue // the task there finished meanwhile: add again
			}
			// Stored, then delivered and forgotten before this read: answer
			// with the task as it was stored.
			at := due.at
			if due.relative {
				at = time.Now().Add(due.delay)
			}
			info, err = durable.TaskInfo{Key: req.Key, State: durable.StateScheduled, Due: at, OriginalDue: at,
				MaxAttempts: maxAttempts(req.MaxAttempts)}, nil
		}
		if err != nil {
			return err
		}
		v := taskView(info)
		v.Created = &added
		if added {
			v.Traceparent, v.Kind = tp, kindCallback
			if streamPayload != nil {
				v.Kind, v.Stream = kindStream, &streamView{stream.Stream}
			}
		} else if err = h.fromPayload(ctx, &v); err != nil {
			return err
		}
		if added {
			return writeJSON(w, http.StatusCreated, v)
		}
		return writeJSON(w, http.StatusOK, v)
	}
	return conflict("the task under this key kept changing while it was read; try again")
}

func maxAttempts(p *int) int {
	if p == nil {
		return 0
	}
	return *p
}

// addError maps the errors of AddHTTP that the checks before it should have
// caught to their fields; others (the store's) pass.
func addError(task durable.HTTPTask, err error) error {
	switch {
	case errors.Is(err, durable.ErrKey):
		return invalid("key", "%v", err)
	case errors.Is(err, durable.ErrTaskOption):
		return invalid("max_attempts", "%v", err)
	}
	return callbackError(task, err)
}

// pathKey is the {key} of r's path, checked.
func pathKey(r *http.Request) (string, error) {
	key := r.PathValue("key")
	return key, checkKey(key)
}

// getTask: GET /v1/tasks/{key}.
func (h *handler) getTask(w http.ResponseWriter, r *http.Request) error {
	key, err := pathKey(r)
	if err != nil {
		return err
	}
	info, err := h.cfg.Queue.Get(r.Context(), key)
	if errors.Is(err, durable.ErrNotFound) {
		return notFound("no task under this key")
	}
	if err != nil {
		return err
	}
	v := taskView(info)
	if err = h.fromPayload(r.Context(), &v); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, v)
}

// cancelTask: DELETE /v1/tasks/{key}. durable's Cancel: a scheduled,
// retrying or dead task is removed; one in flight finishes as cancelled
// whatever its callback answers; a finished task still retained is
// forgotten, which the answer says ({"cancelled": false, "forgotten":
// true}): it read the task's state first, so a task that finishes between
// that read and the Cancel is reported cancelled.
func (h *handler) cancelTask(w http.ResponseWriter, r *http.Request) error {
	key, err := pathKey(r)
	if err != nil {
		return err
	}
	// The read only tells a finished task from a live one: Cancel, a write,
	// decides whether there is a task at all (and answers 503 when the
	// store takes no writes, though it may still serve reads).
	info, err := h.cfg.Queue.Get(r.Context(), key)
	if err != nil && !errors.Is(err, durable.ErrNotFound) {
		return err
	}
	finished := err == nil && (info.State == durable.StateDone || info.State == durable.StateCancelled)
	ok, err := h.cfg.Queue.Cancel(r.Context(), key)
	if err != nil {
		return err
	}
	if !ok {
		return notFound("no task under this key")
	}
	if finished {
		return writeJSON(w, http.StatusOK, map[string]bool{"cancelled": false, "forgotten": true})
	}
	return writeJSON(w, http.StatusOK, map[string]bool{"cancelled": true})
}

type rescheduleRequest struct {
	DueAt *string `json:"due_at"`
	Delay *string `json:"delay"`
}

// rescheduleTask: POST /v1/tasks/{key}/reschedule. 200 with the task; 404
// when there is no task under the key; 409 when it is in flight, dead, done
// or cancelled. A delay counts from this process's clock.
func (h *handler) rescheduleTask(w http.ResponseWriter, r *http.Request) error {
	key, err := pathKey(r)
	if err != nil {
		return err
	}
	var req rescheduleRequest
	if err := decodeBody(w, r, h.cfg.MaxBody, shape{"due_at": nil, "delay": nil}, &req); err != nil {
		return err
	}
	due, err := parseWhen(req.DueAt, req.Delay)
	if err != nil {
		return err
	}
	at := due.at
	if due.relative {
		at = time.Now().Add(due.delay)
	}
	ctx := r.Context()
	for range raceRetries {
		moved, err := h.cfg.Queue.Reschedule(ctx, key, at)
		if errors.Is(err, durable.ErrInFlight) {
			return conflict("the task is in flight: its next time depends on how this delivery ends")
		}
		if err != nil {
			return err
		}
		info, err := h.cfg.Queue.Get(ctx, key)
		switch {
		case moved && errors.Is(err, durable.ErrNotFound):
			// Moved to a time already come, delivered and forgotten since.
			info, err = durable.TaskInfo{Key: key, State: durable.StateScheduled, Due: at, OriginalDue: at}, nil
		case moved:
		case errors.Is(err, durable.ErrNotFound):
			return notFound("no task under this key")
		case err != nil:
		case info.State == durable.StateScheduled || info.State == durable.StateRetrying:
			continue // it came back (a Requeue) between the two calls
		default:
			return conflict("the task is %s: only a scheduled or retrying task can be rescheduled", stateNames[info.State])
		}
		if err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, taskView(info))
	}
	return conflict("the task kept changing while it was rescheduled; try again")
}

// DefaultListLimit is a listing's page size when the request gives none.
const DefaultListLimit = 100

type listJSON struct {
	Tasks      []taskJSON `json:"tasks"`
	NextCursor string     `json:"next_cursor"`
	// Scanned is how many tasks a filtered listing read for this page
	// (search.Scan, filter.go); absent from an unfiltered one.
	Scanned *int `json:"scanned,omitempty"`
}

// listTasks: GET /v1/tasks?state=S&cursor=C&limit=N, durable's List; with
// kind=, prefix= or error= a search (search.Scan, filter.go).
func (h *handler) listTasks(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "state", "cursor", "limit", "kind", "prefix", "error")
	if err != nil {
		return err
	}
	state, ok := parseState(q["state"])
	if !ok {
		return invalid("state", "state must be one of scheduled, retrying, in_flight, dead, done, cancelled")
	}
	return h.list(w, r, state, q)
}

// listDead: GET /v1/dead?cursor=C&limit=N, the dead set oldest death first:
// the listing of state dead.
func (h *handler) listDead(w http.ResponseWriter, r *http.Request) error {
	q, err := query(r, "cursor", "limit")
	if err != nil {
		return err
	}
	return h.list(w, r, durable.StateDead, q)
}

func (h *handler) list(w http.ResponseWriter, r *http.Request, state durable.State, q map[string]string) error {
	limit := DefaultListLimit
	if s, ok := q["limit"]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > durable.MaxListLimit {
			return invalid("limit", "limit must be an integer from 1 to %d", durable.MaxListLimit)
		}
		limit = n
	}
	f, filtered, err := filterOf(q)
	if err != nil {
		return err
	}
	var out listJSON
	var tasks []durable.TaskInfo
	if filtered {
		var res search.Result
		res, err = search.Scan(r.Context(), h.cfg.Queue, state, q["cursor"], f, limit)
		tasks, out.NextCursor, out.Scanned = res.Tasks, res.Next, &res.Scanned
	} else {
		tasks, out.NextCursor, err = h.cfg.Queue.List(r.Context(), state, q["cursor"], limit)
	}
	if errors.Is(err, durable.ErrCursor) {
		return invalid("cursor", "cursor is not one this listing returned")
	}
	if err != nil {
		return err
	}
	out.Tasks = taskViews(tasks)
	return writeJSON(w, http.StatusOK, out)
}

// requeueDead: POST /v1/dead/{key}/requeue. The dead task is due at once,
// its attempts reset; 404 when there is no dead task under the key.
func (h *handler) requeueDead(w http.ResponseWriter, r *http.Request) error {
	key, err := pathKey(r)
	if err != nil {
		return err
	}
	if err := noBody(w, r, h.cfg.MaxBody); err != nil {
		return err
	}
	ok, err := h.cfg.Queue.Requeue(r.Context(), key)
	if err != nil {
		return err
	}
	if !ok {
		return notFound("no dead task under this key")
	}
	return writeJSON(w, http.StatusOK, map[string]bool{"requeued": true})
}

// stats: GET /v1/stats, durable's Stats.
func (h *handler) stats(w http.ResponseWriter, r *http.Request) error {
	if _, err := query(r); err != nil {
		return err
	}
	st, err := h.cfg.Queue.Stats(r.Context())
	if err != nil {
		return err
	}
	out := statsJSON{Total: shardView(st.Total, nil), Shards: make([]shardJSON, 0, len(st.Shards)), Paused: st.Paused}
	for _, s := range st.Shards {
		out.Shards = append(out.Shards, shardView(s, &s.Shard))
	}
	return writeJSON(w, http.StatusOK, out)
}
