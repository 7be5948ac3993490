package durablemetrics

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/go-timingwheel/timingwheel/durable"
)

// The tests need no store: the Observer is fed events as a Queue sends them,
// and the gauges read a StatsSource of the test's own. timerd's tests scrape
// these metrics from a Queue on every store.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// patience bounds every wait of a test on something that should happen soon:
// generous, so that a loaded machine never trips it, and finite, so that a
// broken feature fails the test with a message instead of hanging it.
const patience = 30 * time.Second

// await receives from ch, failing t if nothing comes within patience.
func await[T any](t testing.TB, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(patience):
		t.Fatalf("timed out after %v waiting for %s", patience, what)
		panic("unreachable")
	}
}

// fixedStats is a StatsSource that answers st, or err.
type fixedStats struct {
	st  durable.Stats
	err error
}

func (f fixedStats) Stats(context.Context) (durable.Stats, error) { return f.st, f.err }

// stuckStats is a StatsSource that answers only when its context ends, as a
// store that does not reply.
type stuckStats struct{}

func (stuckStats) Stats(ctx context.Context) (durable.Stats, error) {
	<-ctx.Done()
	return durable.Stats{}, ctx.Err()
}
