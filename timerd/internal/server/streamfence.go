package server

import (
	"context"
	"fmt"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/rediswheel"
)

// checkStream fences a stream task's stream name (config.Streams.CheckName:
// -stream-allow, never the store's own keys); the API calls it at create,
// fenceStreams at delivery.
func (s *Server) checkStream(name string) error {
	return s.cfg.Streams.CheckName(name, s.cfg.Namespace)
}

// fenceStreams checks the stream of every stream task before h appends to
// it: a task stored by a process with another -stream-allow, or before it
// changed, is dead-lettered (Permanent) with the reason, never appended.
// Other tasks, and payloads that do not decode (h dead-letters those), go
// to h as they are.
func fenceStreams(h durable.Handler, check func(name string) error) durable.Handler {
	return func(ctx context.Context, t durable.Task) error {
		if t.Type == rediswheel.StreamTaskType {
			if st, err := rediswheel.DecodeStreamTask(t.Payload); err == nil {
				if err := check(st.Stream); err != nil {
					return durable.Permanent(fmt.Errorf("timerd: stream task refused: %w", err))
				}
			}
		}
		return h(ctx, t)
	}
}
