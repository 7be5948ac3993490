package api

import (
	"encoding/base64"
	"time"
	"unicode/utf8"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
)

// The JSON the API answers with. openapi.json describes each; if one
// changes, change it there too (TestOpenAPI checks real answers against it).

// taskJSON is a task, from durable.TaskInfo.
type taskJSON struct {
	Key            string         `json:"key"`
	State          string         `json:"state"`
	DueAt          *string        `json:"due_at"`
	LeaseExpiresAt *string        `json:"lease_expires_at"`
	OriginalDueAt  *string        `json:"original_due_at"`
	Attempts       int            `json:"attempts"`
	MaxAttempts    *int           `json:"max_attempts"`
	LastError      string         `json:"last_error"`
	AddedAt        *string        `json:"added_at"`
	StartedAt      *string        `json:"started_at"`
	FinishedAt     *string        `json:"finished_at"`
	Deliveries     []deliveryJSON `json:"deliveries"`
	// Traceparent is shown by the answers about one task, not by lists.
	Traceparent string `json:"traceparent,omitempty"`
	Created     *bool  `json:"created,omitempty"`

	// Kind is what the task does, from its type (kindNames in stream.go).
	Kind string `json:"kind,omitempty"`
	// Stream is a stream task's stream, read from its payload as
	// Traceparent is (fromPayload in stream.go).
	Stream *streamView `json:"stream,omitempty"`
}

type deliveryJSON struct {
	Attempt   int         `json:"attempt"`
	Worker    string      `json:"worker"`
	StartedAt *string     `json:"started_at"`
	EndedAt   *string     `json:"ended_at"`
	Outcome   string      `json:"outcome"`
	Error     string      `json:"error"`
	Result    *resultJSON `json:"result"` // null when the delivery produced none
}

// resultJSON is a delivery's result: the callback's status code and response
// body, the body as the create request takes one: body when it is UTF-8 text
// (most callbacks answer JSON or text, readable as is), else body_base64, so
// that any bytes come back exactly (a JSON string cannot hold bytes that are
// not UTF-8). Never both. A truncated body ends where the store
// cut it (durable.MaxResultBody, 64 KiB), less a character cut in two, which would make text look binary.
type resultJSON struct {
	StatusCode    int     `json:"status_code"`
	Body          *string `json:"body,omitempty"`
	BodyBase64    *string `json:"body_base64,omitempty"`
	BodyTruncated bool    `json:"body_truncated"`
}

func resultView(r durable.Result) *resultJSON {
	if r.Code == 0 && len(r.Body) == 0 && !r.Truncated {
		return nil
	}
	out := &resultJSON{StatusCode: r.Code, BodyTruncated: r.Truncated}
	body := r.Body
	if r.Truncated {
		body = dropCutRune(body)
	}
	if utf8.Valid(body) {
		s := string(body)
		out.Body = &s
	} else {
		s := base64.StdEncoding.EncodeToString(r.Body)
		out.BodyBase64 = &s
	}
	return out
}

// dropCutRune drops the start of a UTF-8 character that a cut left at the
// end of b (at most 3 bytes), if b is otherwise text.
func dropCutRune(b []byte) []byte {
	for i := 1; i <= 3 && i <= len(b); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if !utf8.FullRune(b[len(b)-i:]) {
				return b[:len(b)-i]
			}
			break
		}
	}
	return b
}

// stateNames are the API's names of durable's states: the same but for
// "in flight", which is one word here, as a query value must be.
var stateNames = map[durable.State]string{
	durable.StateScheduled: "scheduled",
	durable.StateRetrying:  "retrying",
	durable.StateInFlight:  "in_flight",
	durable.StateDead:      "dead",
	durable.StateDone:      "done",
	durable.StateCancelled: "cancelled",
}

// parseState is stateNames backwards.
func parseState(name string) (durable.State, bool) {
	for s, n := range stateNames {
		if n == name {
			return s, true
		}
	}
	return "", false
}

// timeLayout is RFC 3339 with milliseconds, written in UTC.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// jsonTime is t in timeLayout, or nil (null) for the zero time.
func jsonTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(timeLayout)
	return &s
}

func positive(n int) *int {
	if n <= 0 {
		return nil
	}
	return &n
}

func taskView(info durable.TaskInfo) taskJSON {
	t := taskJSON{
		Key: info.Key, State: stateNames[info.State], OriginalDueAt: jsonTime(info.OriginalDue),
		Attempts: info.Attempts, MaxAttempts: positive(info.MaxAttempts), LastError: info.LastError,
		AddedAt: jsonTime(info.Added), StartedAt: jsonTime(info.Started), FinishedAt: jsonTime(info.Finished),
		Deliveries: make([]deliveryJSON, 0, len(info.History)),
	}
	t.Kind = kindNames[info.Type]
	if info.State == durable.StateInFlight {
		t.LeaseExpiresAt = jsonTime(info.Due)
	} else {
		t.DueAt = jsonTime(info.Due)
	}
	for _, d := range info.History {
		t.Deliveries = append(t.Deliveries, deliveryJSON{
			Attempt: d.Attempt, Worker: d.Worker, StartedAt: jsonTime(d.Start), EndedAt: jsonTime(d.End),
			Outcome: d.Outcome, Error: d.Error, Result: resultView(d.Result),
		})
	}
	return t
}

func taskViews(infos []durable.TaskInfo) []taskJSON {
	out := make([]taskJSON, 0, len(infos))
	for _, info := range infos {
		out = append(out, taskView(info))
	}
	return out
}

// callbackView is a callback as answers show it: URL and method only, since
// headers and body may hold secrets.
type callbackView struct {
	URL    string `json:"url"`
	Method string `json:"method"`
}

type scheduleJSON struct {
	Name        string       `json:"name"`
	Every       string       `json:"every"`
	Cron        string       `json:"cron"`
	Callback    callbackView `json:"callback"`
	MaxAttempts *int         `json:"max_attempts"`
	Version     string       `json:"version"`
	Created     *bool        `json:"created,omitempty"`
}

func scheduleView(d schedules.Definition) scheduleJSON {
	s := scheduleJSON{Name: d.Name, Cron: d.Cron, Callback: callbackView{d.Callback.URL, d.Callback.Method},
		MaxAttempts: positive(d.MaxAttempts), Version: d.Version}
	if d.Every != 0 {
		s.Every = d.Every.String()
	}
	return s
}

type shardJSON struct {
	Shard     *int   `json:"shard,omitempty"`
	Due       int64  `json:"due"`
	Scheduled int64  `json:"scheduled"`
	InFlight  int64  `json:"in_flight"`
	Dead      int64  `json:"dead"`
	Retained  int64  `json:"retained"`
	OldestDue string `json:"oldest_due"`
	Paused    bool   `json:"paused"`
	// States counts per list state, keyed as GET /v1/tasks?state= spells
	// them. The fields above count by place (due and scheduled split the
	// scheduled and retrying tasks by whether they are due yet; retained is
	// done and cancelled): kept as they were, for the lateness and for
	// clients of the first version.
	States map[string]int64 `json:"states"`
}

type statsJSON struct {
	Total  shardJSON   `json:"total"`
	Shards []shardJSON `json:"shards"`
	Paused bool        `json:"paused"`
}

func shardView(s durable.ShardStats, shard *int) shardJSON {
	states := make(map[string]int64, len(stateNames))
	for st, name := range stateNames {
		states[name] = s.States.Of(st)
	}
	return shardJSON{Shard: shard, Due: s.Due, Scheduled: s.Scheduled, InFlight: s.InFlight, Dead: s.Dead,
		Retained: s.Retained, OldestDue: s.OldestDue.String(), Paused: s.Paused, States: states}
}
