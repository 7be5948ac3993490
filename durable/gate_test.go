package durable

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The gate's decisions, on a fake clock: every method takes the time.

var t0 = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

func testGate(t *testing.T, opts FlowOptions, maxWaiting int) *gate {
	t.Helper()
	f, err := NewFlow(opts)
	require.NoError(t, err)
	return newGate(f, maxWaiting)
}

// task is a claimed delivery of key k, with a live context as wait gives it.
func task(name string) *delivery {
	return &delivery{task: Task{Key: name}, ctx: context.Background()}
}

func keysOf(ds []*delivery) []string {
	var out []string
	for _, d := range ds {
		out = append(out, d.task.Key)
	}
	return out
}

func TestGateConcurrency(t *testing.T) {
	g := testGate(t, FlowOptions{Default: Limit{Concurrency: 2}}, 10)
	var started []string
	for i := range 5 {
		d := task(fmt.Sprint("a", i))
		start, back, _ := g.admit(d, "a", t0)
		require.Nil(t, back)
		if start {
			started = append(started, d.task.Key)
		}
	}
	assert.Equal(t, []string{"a0", "a1"}, started, "two at once")
	start, _, next := g.ready(t0, 10)
	assert.Empty(t, start, "nothing finished")
	assert.True(t, next.IsZero(), "only a finish makes room")

	// Another key is not held up by a's.
	start1, _, _ := g.admit(task("b0"), "b", t0)
	assert.True(t, start1)

	w, _ := g.finish("a", result{kind: resultSuccess}, t0)
	assert.True(t, w, "tasks wait")
	start, _, _ = g.ready(t0, 10)
	assert.Equal(t, []string{"a2"}, keysOf(start), "the oldest waiting one, one for the one that finished")
	w, _ = g.finish("a", result{kind: resultSuccess}, t0)
	assert.True(t, w)
	w, _ = g.finish("a", result{kind: resultSuccess}, t0)
	assert.True(t, w)
	start, _, _ = g.ready(t0, 1)
	assert.Equal(t, []string{"a3"}, keysOf(start), "no more than the free handlers")
	start, _, _ = g.ready(t0, 1)
	assert.Equal(t, []string{"a4"}, keysOf(start))

	// A new claim queues behind the waiting ones even when it would fit.
	g2 := testGate(t, FlowOptions{Default: Limit{Concurrency: 1}}, 10)
	s, _, _ := g2.admit(task("x0"), "x", t0)
	require.True(t, s)
	s, _, _ = g2.admit(task("x1"), "x", t0)
	require.False(t, s)
	g2.finish("x", result{kind: resultSuccess}, t0)
	s, _, _ = g2.admit(task("x2"), "x", t0)
	assert.False(t, s, "x1 goes first")
	start, _, _ = g2.ready(t0, 10)
	assert.Equal(t, []string{"x1"}, keysOf(start))
}

func TestGateRate(t *testing.T) {
	g := testGate(t, FlowOptions{Default: Limit{Rate: 2, Burst: 2}}, 10)
	for i := range 4 {
		s, _, _ := g.admit(task(fmt.Sprint("r", i)), "r", t0)
		assert.Equal(t, i < 2, s, "a burst of 2, then wait: task %d", i)
	}
	start, _, next := g.ready(t0, 10)
	assert.Empty(t, start)
	assert.Equal(t, t0.Add(500*time.Millisecond), next, "a token every 500ms")
	start, _, _ = g.ready(t0.Add(499*time.Millisecond), 10)
	assert.Empty(t, start, "never before the token")
	start, _, next = g.ready(t0.Add(500*time.Millisecond), 10)
	assert.Equal(t, []string{"r2"}, keysOf(start))
	assert.Equal(t, t0.Add(time.Second), next)
	start, _, _ = g.ready(t0.Add(10*time.Second), 10)
	assert.Equal(t, []string{"r3"}, keysOf(start), "an idle spell refills at most Burst")
}

func TestGateBreaker(t *testing.T) {
	g := testGate(t, FlowOptions{Breaker: Breaker{Failures: 3, CoolDown: 10 * time.Second, MaxCoolDown: 15 * time.Second}}, 10)
	for i := range 3 {
		s, _, _ := g.admit(task(fmt.Sprint("f", i)), "k", t0)
		require.True(t, s)
	}
	g.finish("k", result{kind: resultFailure}, t0)
	g.finish("k", result{kind: resultAnswer}, t0) // a 4xx, a Cancel: neither way
	g.finish("k", result{kind: resultFailure}, t0)
	s, _, _ := g.admit(task("w0"), "k", t0)
	require.True(t, s, "two failures of three: closed")
	g.finish("k", result{kind: resultFailure}, t0)
	assert.Equal(t, "open", state(g, "k").Breaker, "the third failure in a row")
	s, _, _ = g.admit(task("w1"), "k", t0)
	assert.False(t, s, "open: it waits")
	s, _, _ = g.admit(task("w2"), "k", t0)
	assert.False(t, s)
	start, _, next := g.ready(t0.Add(9*time.Second), 10)
	assert.Empty(t, start)
	assert.Equal(t, t0.Add(10*time.Second), next, "the cool-down's end")

	start, _, _ = g.ready(t0.Add(10*time.Second), 10)
	assert.Equal(t, []string{"w1"}, keysOf(start), "one probe, half-open")
	assert.Equal(t, "half-open", state(g, "k").Breaker)
	start, _, next = g.ready(t0.Add(11*time.Second), 10)
	assert.Empty(t, start, "the others wait for the probe")
	assert.True(t, next.IsZero())

	g.finish("k", result{kind: resultFailure}, t0.Add(12*time.Second))
	assert.Equal(t, t0.Add(27*time.Second), state(g, "k").OpenUntil, "a failed probe doubles the cool-down, up to MaxCoolDown (15s)")
	start, _, _ = g.ready(t0.Add(27*time.Second), 10)
	assert.Equal(t, []string{"w2"}, keysOf(start), "the next probe")
	s, _, _ = g.admit(task("w3"), "k", t0.Add(27*time.Second))
	assert.False(t, s)
	g.finish("k", result{kind: resultSuccess}, t0.Add(28*time.Second))
	start, _, _ = g.ready(t0.Add(28*time.Second), 10)
	assert.Equal(t, []string{"w3"}, keysOf(start), "the probe's success closes it")
	g.finish("k", result{kind: resultSuccess}, t0.Add(28*time.Second))
	assert.Empty(t, g.keys, "a key with nothing to remember is forgotten")

}

func TestGateProbeAnswered(t *testing.T) {
	g := testGate(t, FlowOptions{Breaker: Breaker{Failures: 1, CoolDown: time.Second}}, 10)
	s, _, _ := g.admit(task("a"), "k", t0)
	require.True(t, s)
	g.finish("k", result{kind: resultFailure}, t0)
	for _, n := range []string{"b", "c"} {
		s, _, _ = g.admit(task(n), "k", t0)
		require.False(t, s)
	}
	start, _, _ := g.ready(t0.Add(time.Second), 10)
	require.Equal(t, []string{"b"}, keysOf(start))
	g.finish("k", result{kind: resultAnswer}, t0.Add(time.Second))
	start, _, _ = g.ready(t0.Add(time.Second), 10)
	assert.Equal(t, []string{"c"}, keysOf(start), "an answered probe passes the probe on")
	assert.Equal(t, "half-open", state(g, "k").Breaker)
}

func TestGateRetryAfterPausesTheKey(t *testing.T) {
	g := testGate(t, FlowOptions{}, 10)
	s, _, _ := g.admit(task("a"), "k", t0)
	require.True(t, s)
	s, _, _ = g.admit(task("other"), "other", t0)
	require.True(t, s)
	g.finish("k", result{kind: resultPause, pause: 5 * time.Second}, t0)
	s, _, _ = g.admit(task("b"), "k", t0.Add(time.Second))
	assert.False(t, s, "a RetryAfter of one task holds the whole key")
	s, _, _ = g.admit(task("other2"), "other", t0.Add(time.Second))
	assert.True(t, s, "and no other key")
	start, _, next := g.ready(t0.Add(time.Second), 10)
	assert.Empty(t, start)
	assert.Equal(t, t0.Add(5*time.Second), next)
	start, _, _ = g.ready(t0.Add(5*time.Second), 10)
	assert.Equal(t, []string{"b"}, keysOf(start))
}

func TestGateMaxWaitingHandsBack(t *testing.T) {
	g := testGate(t, FlowOptions{Default: Limit{Concurrency: 1}}, 3)
	s, _, _ := g.admit(task("hog0"), "hog", t0)
	require.True(t, s)
	for i := 1; i <= 3; i++ {
		s, back, _ := g.admit(task(fmt.Sprint("hog", i)), "hog", t0)
		require.False(t, s)
		require.Nil(t, back, "room to wait")
	}
	d := task("hog4")
	s, back, delay := g.admit(d, "hog", t0)
	assert.False(t, s)
	assert.Same(t, d, back, "the longest queue's own newest task goes back")
	assert.Equal(t, 4*time.Second, delay, "a flowRetry per round of its Concurrency (1) waiting ahead (3), plus one")

	s, _, _ = g.admit(task("b0"), "b", t0)
	require.True(t, s, "another key still starts")
	s, back, _ = g.admit(task("b1"), "b", t0)
	assert.False(t, s)
	require.NotNil(t, back)
	assert.Equal(t, "hog3", back.task.Key, "b1 waits in the place of hog's newest")
	assert.Equal(t, 3, g.waiting, "the bound holds")
	assert.Equal(t, []int{2, 1}, []int{len(g.keys["hog"].queue), len(g.keys["b"].queue)})

	// An open breaker adds its cool-down to the delay.
	g2 := testGate(t, FlowOptions{Breaker: Breaker{Failures: 1, CoolDown: time.Minute}}, 0)
	s, _, _ = g2.admit(task("x"), "x", t0)
	require.True(t, s)
	g2.finish("x", result{kind: resultFailure}, t0)
	_, back, delay = g2.admit(task("y"), "x", t0.Add(10*time.Second))
	require.NotNil(t, back)
	assert.Equal(t, 51*time.Second, delay, "50s left of the cool-down, and a flowRetry")
}

func TestGateSweepsGoneTasks(t *testing.T) {
	g := testGate(t, FlowOptions{Default: Limit{Concurrency: 1}}, 10)
	s, _, _ := g.admit(task("run"), "k", t0)
	require.True(t, s)
	ctx, cancel := context.WithCancelCause(context.Background())
	gone := &delivery{task: Task{Key: "gone"}, ctx: ctx}
	for _, d := range []*delivery{task("w0"), gone, task("w1")} {
		s, _, _ = g.admit(d, "k", t0)
		require.False(t, s)
	}
	cancel(ErrCanceled)
	_, out, _ := g.ready(t0, 10)
	assert.Empty(t, out, "only a sweep looks past the heads")
	g.sweep.Store(true)
	_, out, _ = g.ready(t0, 10)
	assert.Equal(t, []string{"gone"}, keysOf(out))
	assert.Equal(t, 2, g.waiting)
	g.finish("k", result{kind: resultSuccess}, t0)
	start, _, _ := g.ready(t0, 10)
	assert.Equal(t, []string{"w0"}, keysOf(start), "order kept")
}

func TestRunnerResultOf(t *testing.T) {
	r := &runner{work: context.Background()}
	live := context.Background()
	timedOut, cancel := context.WithTimeoutCause(context.Background(), 0, ErrHandlerTimeout)
	defer cancel()
	<-timedOut.Done()
	canceled, cancel2 := context.WithCancelCause(context.Background())
	cancel2(ErrCanceled)
	for _, c := range []struct {
		name string
		ctx  context.Context
		err  error
		want result
	}{
		{"done", live, nil, result{kind: resultSuccess}},
		{"failed", live, errors.New("503"), result{kind: resultFailure}},
		{"timed out", timedOut, context.DeadlineExceeded, result{kind: resultFailure}},
		{"cancelled", canceled, context.Canceled, result{kind: resultAnswer}},
		{"permanent", live, Permanent(errors.New("404")), result{kind: resultAnswer}},
		{"retry after", live, RetryAfterError(3*time.Second, errors.New("429")), result{kind: resultPause, pause: 3 * time.Second}},
	} {
		assert.Equal(t, c.want, r.resultOf(c.ctx, c.err), c.name)
	}
}

func TestFlowOptionsChecked(t *testing.T) {
	for _, o := range []FlowOptions{
		{Default: Limit{Concurrency: -1}},
		{Default: Limit{Rate: -1}},
		{Default: Limit{Burst: -1}},
		{Breaker: Breaker{Failures: -1}},
		{Breaker: Breaker{Failures: 1, CoolDown: time.Minute, MaxCoolDown: time.Second}},
		{MaxWaiting: -1},
	} {
		_, err := NewFlow(o)
		assert.ErrorIs(t, err, ErrFlow, "%+v", o)
	}
	f, err := NewFlow(FlowOptions{Default: Limit{Concurrency: 8}})
	require.NoError(t, err)
	assert.ErrorIs(t, f.SetLimit("k", Limit{Rate: -2}), ErrFlow)
	require.NoError(t, f.SetLimit("k", Limit{Concurrency: 1}))
	assert.Equal(t, Limit{Concurrency: 1}, f.Limit("k"))
	assert.Equal(t, Limit{Concurrency: 8}, f.Limit("other"))
	f.DeleteLimit("k")
	assert.Equal(t, Limit{Concurrency: 8}, f.Limit("k"))
	assert.Equal(t, DefaultCoolDown, f.Breaker().CoolDown)

	m := NewMux()
	assert.PanicsWithValue(t, `durable: Mux.Limit: durable: bad flow control setting: Concurrency -1 (want 0 or more) (key "email")`,
		func() { m.Limit("email", Limit{Concurrency: -1}) })
	m.Limit("email", Limit{Concurrency: 2})
	assert.Same(t, m.Flow(), m.Flow())
	assert.Equal(t, Limit{Concurrency: 2}, m.Flow().Limit("email"))
	assert.Equal(t, "email", m.Flow().key(Task{Type: "email"}), "keyed by type")
}

func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"https://API.example.com/hook?x=1": "https://api.example.com:443",
		"http://example.com":               "http://example.com:80",
		"HTTP://example.com:8080/a":        "http://example.com:8080",
		"http://[::1]:9000/":               "http://[::1]:9000",
		"http://[::ffff:127.0.0.1]:80/":    "http://127.0.0.1:80",
		"http://[::FFFF:7f00:1]/":          "http://127.0.0.1:80",
		"http://[0:0::1]:0009000/":         "http://[::1]:9000",
		"https://Example.COM.:0443/":       "https://example.com:443",
		"http://example.com:080":           "http://example.com:80",
		"http://XN--BCHER-KVA.example/":    "http://xn--bcher-kva.example:80",
		"http://[fe80::1%25eth0]:81/":      "http://[fe80::1%eth0]:81",
	} {
		got, err := Origin(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, bad := range []string{"ftp://x/", "/relative", "http://", "::", "http://bücher.example/", "http://x:65536/", "http://x..:80/", "http://.:80/"} {
		_, err := Origin(bad)
		assert.ErrorIs(t, err, ErrInvalidURL, bad)
	}
	payload, err := EncodeHTTPTask(HTTPTask{URL: "https://Hooks.example.com/a", Method: "POST"})
	require.NoError(t, err)
	assert.Equal(t, "https://hooks.example.com:443", HTTPOrigin(Task{Type: HTTPTaskType, Payload: payload}))
	assert.Equal(t, "", HTTPOrigin(Task{Type: "email", Payload: payload}), "not an HTTP task: not flow controlled")
	assert.Equal(t, "", HTTPOrigin(Task{Type: HTTPTaskType, Payload: []byte("{")}))
}

func state(g *gate, key string) KeyState {
	for _, s := range g.snapshot(t0) {
		if s.Key == key {
			return s
		}
	}
	return KeyState{}
}
