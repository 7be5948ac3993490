package rediswheel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/redis/go-redis/v9"
)

// Hand-off to a Redis Stream: a task whose work is "append this message to
// a stream", for consumers that read at their own pace with consumer groups
// (XREADGROUP, XACK) instead of receiving a callback. StreamHandler is the
// handler; register it in a Mux for StreamTaskType, and add tasks with
// EncodeStreamTask's payload and TaskType(StreamTaskType).
//
// Delivery is at-least-once, like every handler's: an XADD whose settle is
// lost is done again when the task is redelivered. Every message carries the
// task key (StreamFieldKey) and the attempt (StreamFieldAttempt), so a
// consumer de-duplicates on the key.

// StreamTaskType is the task type StreamHandler serves in a Mux.
const StreamTaskType = "stream"

// The fields StreamHandler adds to every message, before the task's own.
const (
	StreamFieldKey     = "task_key"
	StreamFieldAttempt = "task_attempt"
)

// MaxStreamName caps StreamTask.Stream, in bytes.
const MaxStreamName = 512

// ErrStreamTask reports a StreamTask that cannot be sent: an empty or too
// long stream name, no fields, an empty field name or one of the fields
// StreamHandler sets; or, from DecodeStreamTask, a payload that is not one.
var ErrStreamTask = errors.New("rediswheel: bad stream task")

// StreamTask is a message to append to a stream when a task is due.
type StreamTask struct {
	// Stream is the stream's key, 1..MaxStreamName bytes.
	Stream string
	// Fields are the message's fields, at least one; StreamHandler writes
	// them ordered by name, after StreamFieldKey and StreamFieldAttempt,
	// which they may not name.
	Fields map[string]string
}

// streamPayload is StreamTask's stored form; fields are only ever added, a
// change an older handler would misread gets a new version.
type streamPayload struct {
	Version int               `json:"v"`
	Stream  string            `json:"stream"`
	Fields  map[string]string `json:"fields"`
}

const streamPayloadVersion = 1

func (s StreamTask) validate() error {
	switch {
	case s.Stream == "" || len(s.Stream) > MaxStreamName:
		return fmt.Errorf("%w: stream name of %d bytes (want 1 to %d)", ErrStreamTask, len(s.Stream), MaxStreamName)
	case len(s.Fields) == 0:
		return fmt.Errorf("%w: no fields", ErrStreamTask)
	}
	for name := range s.Fields {
		if name == "" || name == StreamFieldKey || name == StreamFieldAttempt {
			return fmt.Errorf("%w: field name %q (empty, or set by StreamHandler)", ErrStreamTask, name)
		}
	}
	return nil
}

// EncodeStreamTask returns s as the payload of a task for StreamHandler, or
// an error wrapping ErrStreamTask.
func EncodeStreamTask(s StreamTask) ([]byte, error) {
	if err := s.validate(); err != nil {
		return nil, err
	}
	return json.Marshal(streamPayload{Version: streamPayloadVersion, Stream: s.Stream, Fields: s.Fields})
}

// DecodeStreamTask reads a payload EncodeStreamTask wrote; an error wraps
// ErrStreamTask.
func DecodeStreamTask(payload []byte) (StreamTask, error) {
	var p streamPayload
	if err := json.Unmarshal(payload, &p); err != nil {
		return StreamTask{}, fmt.Errorf("%w: %v", ErrStreamTask, err)
	}
	if p.Version != streamPayloadVersion {
		return StreamTask{}, fmt.Errorf("%w: version %d, this code reads version %d", ErrStreamTask, p.Version, streamPayloadVersion)
	}
	s := StreamTask{Stream: p.Stream, Fields: p.Fields}
	return s, s.validate()
}

// StreamOption configures StreamHandler.
type StreamOption func(*streamHandler)

// StreamMaxLen bounds each stream StreamHandler appends to at about n
// messages (XADD MAXLEN ~ n: Redis trims whole nodes, so a stream may hold
// up to one node more, 100 entries by default, stream-node-max-entries).
// Trimming drops the oldest messages whether consumers read them or not.
// It panics unless n > 0.
func StreamMaxLen(n int64) StreamOption {
	if n <= 0 {
		panic("rediswheel: StreamMaxLen: n must be positive")
	}
	return func(h *streamHandler) { h.maxLen = n }
}

type streamHandler struct {
	client redis.UniversalClient
	maxLen int64 // 0: no bound
}

// StreamHandler returns a Handler that appends each task's StreamTask (its
// payload) to its stream with one XADD on client, the message's fields
// being StreamFieldKey (the task key), StreamFieldAttempt and the task's
// fields. A payload that is not a StreamTask, or a key that holds something
// other than a stream (WRONGTYPE), sends the task to the dead set at once
// (Permanent); any other error retries it. client may be a cluster client:
// the stream lives on its key's slot. It panics if client is nil.
func StreamHandler(client redis.UniversalClient, opts ...StreamOption) durable.Handler {
	if client == nil {
		panic("rediswheel: StreamHandler with nil client")
	}
	h := &streamHandler{client: client}
	for _, opt := range opts {
		opt(h)
	}
	return h.handle
}

func (h *streamHandler) handle(ctx context.Context, t durable.Task) error {
	s, err := DecodeStreamTask(t.Payload)
	if err != nil {
		return durable.Permanent(err)
	}
	names := make([]string, 0, len(s.Fields))
	for name := range s.Fields {
		names = append(names, name)
	}
	slices.Sort(names)
	values := make([]any, 0, 4+2*len(names))
	values = append(values, StreamFieldKey, t.Key, StreamFieldAttempt, strconv.Itoa(t.Attempt))
	for _, name := range names {
		values = append(values, name, s.Fields[name])
	}
	args := &redis.XAddArgs{Stream: s.Stream, Values: values}
	if h.maxLen > 0 {
		args.MaxLen, args.Approx = h.maxLen, true
	}
	if err := h.client.XAdd(ctx, args).Err(); err != nil {
		if strings.HasPrefix(err.Error(), "WRONGTYPE") {
			return durable.Permanent(fmt.Errorf("rediswheel: stream %q: %w", s.Stream, err))
		}
		return fmt.Errorf("rediswheel: stream %q: %w", s.Stream, err)
	}
	return nil
}
