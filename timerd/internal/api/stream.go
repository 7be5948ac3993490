package api

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// Stream tasks: a task whose work is appending a message to a Redis Stream
// (rediswheel's StreamHandler, which the server's workers register under
// rediswheel.StreamTaskType) instead of an HTTP callback. The checks are
// rediswheel's (EncodeStreamTask); this file names the field at fault.

// streamJSON is a stream message as a request gives it.
type streamJSON struct {
	Name   string            `json:"name"`
	Fields map[string]string `json:"fields"`
}

var streamShape = shape{"name": nil, "fields": anyFields}

// streamTraceField is the message field that carries the traceparent given
// on create, as a callback's carries it in its Traceparent header: the
// consumer's trace links to the request that scheduled the task.
const streamTraceField = "traceparent"

// checkKind refuses a request giving both or neither of callback and stream.
func checkKind(cb *callbackJSON, st *streamJSON) error {
	switch {
	case cb != nil && st != nil:
		return invalid("stream", "give exactly one of callback and stream, not both")
	case cb == nil && st == nil:
		return invalid("callback", "callback is required (or, instead, stream)")
	}
	return nil
}

// payload checks s as EncodeStreamTask does and returns its payload, with
// traceparent tp (if any) among its fields. A server without a Redis for
// streams (Config.Streams false) refuses every stream task: 400 naming
// stream, since nothing in the request can be stored as asked (README.md,
// "Hand-off to a stream"). check, if not nil, fences the stream's name
// (Config.CheckStream).
func (s *streamJSON) payload(configured bool, check func(string) error, tp string) (rediswheel.StreamTask, []byte, error) {
	if !configured {
		return rediswheel.StreamTask{}, nil, invalid("stream", "this timerd has no Redis for stream tasks: start it with -stream-redis-url (TIMERD_STREAM_REDIS_URL), or on a Redis store")
	}
	if check != nil {
		if err := check(s.Name); err != nil {
			return rediswheel.StreamTask{}, nil, invalid("stream.name", "%v", err)
		}
	}
	t := rediswheel.StreamTask{Stream: s.Name, Fields: s.Fields}
	if tp != "" {
		if _, ok := s.Fields[streamTraceField]; ok {
			return t, nil, invalid("stream.fields."+streamTraceField, "give traceparent either as the request's header or among stream.fields, not both")
		}
		t.Fields = make(map[string]string, len(s.Fields)+1)
		for name, v := range s.Fields {
			t.Fields[name] = v
		}
		t.Fields[streamTraceField] = tp
	}
	p, err := rediswheel.EncodeStreamTask(t)
	if err != nil {
		return t, nil, streamError(t, err)
	}
	return t, p, nil
}

// streamError maps an error of EncodeStreamTask to the field at fault, found
// by asking it again about each part alone, so that its rules are written
// once, in rediswheel.
func streamError(t rediswheel.StreamTask, err error) error {
	if !errors.Is(err, rediswheel.ErrStreamTask) {
		return err
	}
	msg := strings.TrimPrefix(err.Error(), "rediswheel: ")
	if _, e := rediswheel.EncodeStreamTask(rediswheel.StreamTask{Stream: t.Stream, Fields: map[string]string{"f": ""}}); e != nil {
		return invalid("stream.name", "%s", msg)
	}
	if len(t.Fields) == 0 {
		return invalid("stream.fields", "%s", msg)
	}
	names := make([]string, 0, len(t.Fields))
	for name := range t.Fields {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		if _, e := rediswheel.EncodeStreamTask(rediswheel.StreamTask{Stream: t.Stream, Fields: map[string]string{name: ""}}); e != nil {
			return invalid("stream.fields."+name, "%s", msg)
		}
	}
	return invalid("stream", "%s", msg)
}

// The kinds of task (taskJSON.Kind): a callback (durable.HTTPTaskType)
// or a stream message (rediswheel.StreamTaskType). A task of another type,
// which timerd does not create, shows none.
const (
	kindCallback = "callback"
	kindStream   = "stream"
)

var kindNames = map[string]string{durable.HTTPTaskType: kindCallback, streamTaskType: kindStream}

// A stream task is rediswheel's: this file is the API's only use of
// rediswheel, which is here a client of Redis Streams, whatever the store
// (config.Streams), not the store itself.
type streamTask = rediswheel.StreamTask

const streamTaskType = rediswheel.StreamTaskType

// streamView is a stream task as answers show it: its stream's name, not the
// fields, which may hold what a consumer alone should read.
type streamView struct {
	Name string `json:"name"`
}

// fromPayload sets what v, the task under v.Key, shows of its stored
// payload: the traceparent, and a stream task's stream. A finished task's
// payload is freed, and a payload this API did not write shows nothing;
// without Config.Payload nothing is read. The error is the store's.
func (h *handler) fromPayload(ctx context.Context, v *taskJSON) error {
	if h.cfg.Payload == nil {
		return nil
	}
	p, err := h.cfg.Payload(ctx, v.Key)
	if err != nil || len(p) == 0 {
		return err
	}
	if v.Kind == kindStream {
		if s, err := rediswheel.DecodeStreamTask(p); err == nil {
			v.Stream, v.Traceparent = &streamView{s.Stream}, s.Fields[streamTraceField]
		}
		return nil
	}
	if t, err := durable.DecodeHTTPTask(p); err == nil {
		v.Traceparent = t.Header.Get(traceHeader)
	}
	return nil
}
