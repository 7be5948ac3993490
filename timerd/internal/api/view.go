package api

import (
	"time"

	"github.com/go-timingwheel/timingwheel/rediswheel"
	"github.com/go-timingwheel/timingwheel/timerd/internal/schedules"
)

// The JSON the API answers with. openapi.json describes each; if one
// changes, change it there too (TestOpenAPI checks real answers against it).

// taskJSON is a task, from rediswheel.TaskInfo.
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
	Attempt   int     `json:"attempt"`
	Worker    string  `json:"worker"`
	StartedAt *string `json:"started_at"`
	EndedAt   *string `json:"ended_at"`
	Outcome   string  `json:"outcome"`
	Error     string  `json:"error"`
}

// stateNames are the API's names of rediswheel's states: the same but for
// "in flight", which is one word here, as a query value must be.
var stateNames = map[rediswheel.State]string{
	rediswheel.StateScheduled: "scheduled",
	rediswheel.StateRetrying:  "retrying",
	rediswheel.StateInFlight:  "in_flight",
	rediswheel.StateDead:      "dead",
	rediswheel.StateDone:      "done",
	rediswheel.StateCancelled: "cancelled",
}

// parseState is stateNames backwards.
func parseState(name string) (rediswheel.State, bool) {
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

func taskView(info rediswheel.TaskInfo) taskJSON {
	t := taskJSON{
		Key: info.Key, State: stateNames[info.State], OriginalDueAt: jsonTime(info.OriginalDue),
		Attempts: info.Attempts, MaxAttempts: positive(info.MaxAttempts), LastError: info.LastError,
		AddedAt: jsonTime(info.Added), StartedAt: jsonTime(info.Started), FinishedAt: jsonTime(info.Finished),
		Deliveries: make([]deliveryJSON, 0, len(info.History)),
	}
	t.Kind = kindNames[info.Type]
	if info.State == rediswheel.StateInFlight {
		t.LeaseExpiresAt = jsonTime(info.Due)
	} else {
		t.DueAt = jsonTime(info.Due)
	}
	for _, d := range info.History {
		t.Deliveries = append(t.Deliveries, deliveryJSON{
			Attempt: d.Attempt, Worker: d.Worker, StartedAt: jsonTime(d.Start), EndedAt: jsonTime(d.End),
			Outcome: d.Outcome, Error: d.Error,
		})
	}
	return t
}

func taskViews(infos []rediswheel.TaskInfo) []taskJSON {
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
}

type statsJSON struct {
	Total  shardJSON   `json:"total"`
	Shards []shardJSON `json:"shards"`
	Paused bool        `json:"paused"`
}

func shardView(s rediswheel.ShardStats, shard *int) shardJSON {
	return shardJSON{Shard: shard, Due: s.Due, Scheduled: s.Scheduled, InFlight: s.InFlight, Dead: s.Dead,
		Retained: s.Retained, OldestDue: s.OldestDue.String(), Paused: s.Paused}
}
