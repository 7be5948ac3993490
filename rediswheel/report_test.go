package rediswheel

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// capture is a slog.Handler that keeps the records it is given.
type capture struct {
	mu      sync.Mutex
	records []slog.Record
}

func (c *capture) Enabled(context.Context, slog.Level) bool { return true }
func (c *capture) WithAttrs([]slog.Attr) slog.Handler       { return c }
func (c *capture) WithGroup(string) slog.Handler            { return c }
func (c *capture) Handle(_ context.Context, r slog.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.records = append(c.records, r.Clone())
	return nil
}

func (c *capture) all() []slog.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]slog.Record(nil), c.records...)
}

// logTo makes h slog's default handler until t ends.
func logTo(t *testing.T, h slog.Handler) {
	old := slog.Default()
	slog.SetDefault(slog.New(h))
	t.Cleanup(func() { slog.SetDefault(old) })
}

// Without OnError, the errors Run retries go to slog.Default at warning
// level, with the failed operation and the error; with OnError, there only.
func TestErrorsGoToSlogWithoutOnError(t *testing.T) {
	var logged capture
	logTo(t, &logged)
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	defer c.Close()

	runFor := func(opts Options) {
		q, err := newTQ(c, opts)
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
		defer cancel()
		require.NoError(t, q.Run(ctx, func(context.Context, Task) error { return nil }))
	}

	var reported []error
	runFor(Options{Namespace: "unreachable", OnError: func(err error) { reported = append(reported, err) }})
	assert.NotEmpty(t, reported)
	assert.Empty(t, logged.all(), "logged although OnError was set")

	runFor(Options{Namespace: "unreachable"})
	records := logged.all()
	require.NotEmpty(t, records, "errors went nowhere")
	for _, r := range records {
		assert.Equal(t, slog.LevelWarn, r.Level)
		attrs := map[string]slog.Value{}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value
			return true
		})
		assert.Equal(t, "claim", attrs["op"].String())
		assert.Equal(t, "unreachable", attrs["namespace"].String())
		err, ok := attrs["err"].Any().(error)
		if assert.True(t, ok, "err attribute %v", attrs["err"]) {
			assert.ErrorContains(t, err, "connection refused")
		}
	}
}

// Periodic's errors are no different: without OnError they go to slog, not
// nowhere (its loop retries them, so they are all anyone sees).
func TestPeriodicErrorsGoToSlogWithoutOnError(t *testing.T) {
	var logged capture
	logTo(t, &logged)
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
	defer c.Close()
	q, err := newTQ(c, Options{Namespace: "unreachable"})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	require.NoError(t, q.Periodic(ctx, "tick", Every(time.Second), nil))

	records := logged.all()
	require.NotEmpty(t, records, "errors went nowhere")
	for _, r := range records {
		assert.Equal(t, slog.LevelWarn, r.Level)
		attrs := map[string]slog.Value{}
		r.Attrs(func(a slog.Attr) bool {
			attrs[a.Key] = a.Value
			return true
		})
		assert.Equal(t, "periodic", attrs["op"].String())
		assert.ErrorContains(t, attrs["err"].Any().(error), "connection refused")
	}
}
