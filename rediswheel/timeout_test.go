package rediswheel

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Negative durations are refused; zero means no bound and no grace.
func TestNewChecksWorkerDurations(t *testing.T) {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"}) // never dialled
	defer c.Close()
	for _, o := range []Options{
		{Namespace: "n", HandlerTimeout: -time.Nanosecond},
		{Namespace: "n", ShutdownGrace: -time.Second},
	} {
		q, err := newTQ(c, o)
		assert.Nil(t, q)
		assert.ErrorIs(t, err, ErrOptions)
	}
	q, err := newTQ(c, Options{Namespace: "n"})
	require.NoError(t, err)
	assert.Zero(t, q.opts.HandlerTimeout)
	assert.Zero(t, q.opts.ShutdownGrace)
}
