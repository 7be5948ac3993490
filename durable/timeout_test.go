package durable

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// The task's own timeout replaces the Queue's.
func TestHandlerTimeoutOfTask(t *testing.T) {
	r := &runner{q: stubQueue(t, Options{HandlerTimeout: time.Minute})}
	assert.Equal(t, time.Minute, r.handlerTimeout(&delivery{}))
	assert.Equal(t, time.Second, r.handlerTimeout(&delivery{policy: Policy{Timeout: time.Second}}))
	assert.Equal(t, time.Hour, r.handlerTimeout(&delivery{policy: Policy{Timeout: time.Hour}}), "longer than the Queue's too")
}
