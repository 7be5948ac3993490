package server

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/timerd/internal/config"
)

// The configuration's flow control reaches the workers' Queue and the API as
// one Flow keyed by callback origin, and the start-up line states it.
func TestFlowFromConfig(t *testing.T) {
	gotAPI, _ := stubParts(t)
	cfg := testConfig(t, "redis://"+redisAddr(t)+"/0")
	cfg.Flow = config.Flow{
		Default: durable.Limit{Concurrency: 3},
		Origins: map[string]durable.Limit{"https://a.example.com:443": {Rate: 2, Burst: 4}},
		Breaker: durable.Breaker{Failures: 4, CoolDown: time.Minute},
	}
	s := newServer(t, cfg)
	defer s.Close()
	require.NotNil(t, s.flow)
	assert.Same(t, s.flow, s.queue.Options().Flow, "the workers'")
	assert.Same(t, s.flow, gotAPI.Flow, "the API's")
	assert.Equal(t, durable.Limit{Rate: 2, Burst: 4}, s.flow.Limit("https://a.example.com:443"))
	assert.Equal(t, durable.Limit{Concurrency: 3}, s.flow.Limit("https://b.example.com:443"))

	payload, err := durable.EncodeHTTPTask(durable.HTTPTask{URL: "https://A.example.com/x", Method: "POST"})
	require.NoError(t, err)
	assert.Equal(t, durable.Limit{Rate: 2, Burst: 4}, s.flow.Limit(durable.HTTPOrigin(durable.Task{Type: durable.HTTPTaskType, Payload: payload})),
		"keyed by the callback's origin")

	assert.Equal(t, []any{"origin_limit", "concurrency:3,rate:0,burst:0",
		"origin_limits", []string{"https://a.example.com:443=concurrency:0,rate:2,burst:4"},
		"breaker_failures", 4, "breaker_cooldown", "1m0s", "breaker_max_cooldown", "10m0s"}, flowLog(s.flow))
}
