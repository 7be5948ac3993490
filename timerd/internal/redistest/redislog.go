package redistest

import (
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// heldLines bounds the go-redis log lines HoldRedisLog keeps: the last ones
// are the ones near a failure.
const heldLines = 50

// HoldRedisLog returns m with go-redis's logger held while its tests run:
// what go-redis logs (hundreds of "failed to dial" lines from tests that
// reach a closed port on purpose) is printed only when a test failed, after
// the results, the last heldLines lines with a count of the others. Every
// Redis failure a test cares about reaches it as an error anyway. Give it
// to goleak.VerifyTestMain in TestMain.
func HoldRedisLog(m goleak.TestingM) goleak.TestingM {
	return &holding{m: m}
}

type holding struct {
	m goleak.TestingM

	mu      sync.Mutex
	lines   []string // the last heldLines
	dropped int      // lines logged before those
}

func (h *holding) Run() int {
	redis.SetLogger(h)
	code := h.m.Run()
	h.mu.Lock()
	defer h.mu.Unlock()
	if code != 0 && len(h.lines) > 0 {
		fmt.Fprintf(os.Stderr, "go-redis logged during the tests (%d earlier lines left out):\n", h.dropped)
		for _, l := range h.lines {
			fmt.Fprintln(os.Stderr, "  "+l)
		}
	}
	return code
}

// Printf is go-redis's Logging.
func (h *holding) Printf(_ context.Context, format string, v ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.lines) == heldLines {
		h.lines = h.lines[1:]
		h.dropped++
	}
	h.lines = append(h.lines, fmt.Sprintf(format, v...))
}
