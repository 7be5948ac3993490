package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkInvariants fails t unless q's namespace holds what keys.lua promises:
// each task in at most one of due, lease, dead and kept, with a payload
// exactly while it is in one (the body invariant), no per-task field of a
// task in none (a leak, as forget's list once missed a field), t| and x|
// only in flight, f| only retained.
func checkInvariants(t *testing.T, q *testQueue) {
	t.Helper()
	ctx := context.Background()
	for shard, keys := range q.keys {
		where := map[string]string{}
		for i, name := range []string{"due", "lease", "dead", "body", "ctl", "kept"} {
			if name == "body" || name == "ctl" {
				continue
			}
			ms, err := q.client.ZRange(ctx, keys[i], 0, -1).Result()
			require.NoError(t, err)
			for _, m := range ms {
				if w, ok := where[m]; ok {
					t.Errorf("shard %d: %q in %s and %s", shard, m, w, name)
				}
				where[m] = name
			}
		}
		body, err := q.client.HKeys(ctx, keys[3]).Result()
		require.NoError(t, err)
		inBody := map[string]bool{}
		for _, k := range body {
			inBody[k] = true
			if where[k] == "" {
				t.Errorf("shard %d: orphan payload %q", shard, k)
			}
		}
		for k, w := range where {
			if !inBody[k] {
				t.Errorf("shard %d: %q in %s without payload", shard, k, w)
			}
		}
		fields, err := q.client.HKeys(ctx, keys[4]).Result()
		require.NoError(t, err)
		for _, f := range fields {
			if strings.HasPrefix(f, "#") {
				continue
			}
			p, k, _ := strings.Cut(f, "|")
			w := where[k]
			switch {
			case w == "":
				t.Errorf("shard %d: leaked field %q", shard, f)
			case (p == "t" || p == "x") && w != "lease":
				t.Errorf("shard %d: field %q of a task in %s", shard, f, w)
			case p == "f" && w != "kept":
				t.Errorf("shard %d: field %q of a task in %s", shard, f, w)
			}
		}
	}
}

// Three Runs, restarted every second or so (shutdown grace, releases),
// with handlers that succeed, fail, postpone, time out, panic and die for
// good, race a caller that Adds, Replaces, Cancels, Reschedules, Requeues,
// Gets, Lists and Pauses the same 60 keys, with and without retention. The
// scripts' invariants hold at the end, and everything left drains.
func TestInvariantsUnderRaces(t *testing.T) {
	for _, tc := range []struct {
		srv       int
		retention time.Duration
	}{{0, 0}, {1, 500 * time.Millisecond}} {
		srv, retention := servers[tc.srv], tc.retention
		t.Run(fmt.Sprintf("%s/%v", srv.name, retention), func(t *testing.T) {
			c := srv.client(t)
			opts := Options{Shards: 4, Lease: 300 * time.Millisecond, MaxAttempts: 3, MaxDead: 5, Retention: retention, MaxRetained: 20,
				Backoff:        func(int) time.Duration { return time.Duration(rand.IntN(50)) * time.Millisecond },
				HandlerTimeout: 200 * time.Millisecond, ShutdownGrace: 50 * time.Millisecond, Concurrency: 8, OnError: func(error) {}}
			q := newQueue(t, c, opts)
			ctx := context.Background()
			keys := make([]string, 60)
			for i := range keys {
				keys[i] = fmt.Sprintf("k%02d", i)
			}
			var ran atomic.Int64
			h := func(ctx context.Context, tk Task) error {
				ran.Add(1)
				switch rand.IntN(7) {
				case 0:
					return errors.New("boom")
				case 1:
					return RetryAfter(time.Duration(rand.IntN(30)) * time.Millisecond)
				case 2:
					select { // outlive the timeout sometimes
					case <-time.After(time.Duration(rand.IntN(400)) * time.Millisecond):
					case <-ctx.Done():
						if rand.IntN(2) == 0 {
							return ctx.Err()
						}
					}
					return nil
				case 3:
					return Permanent(errors.New("perm"))
				case 4:
					panic("oops")
				}
				time.Sleep(time.Duration(rand.IntN(20)) * time.Millisecond)
				return nil
			}
			var wg sync.WaitGroup
			runCtx, stopRun := context.WithCancel(ctx)
			for range 3 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for runCtx.Err() == nil {
						rctx, cancel := context.WithTimeout(runCtx, time.Duration(300+rand.IntN(700))*time.Millisecond)
						assert.NoError(t, q.Run(rctx, h))
						cancel()
					}
				}()
			}
			deadline := time.Now().Add(3 * time.Second)
			for time.Now().Before(deadline) {
				k := keys[rand.IntN(len(keys))]
				at := time.Now().Add(time.Duration(rand.IntN(100)-20) * time.Millisecond)
				var err error
				switch rand.IntN(8) {
				case 0, 1:
					_, err = q.Add(ctx, k, []byte("p"), at, TaskMaxAttempts(1+rand.IntN(3)))
				case 2:
					err = q.Replace(ctx, k, []byte("p"), at)
					if errors.Is(err, ErrInFlight) {
						err = nil
					}
				case 3:
					_, err = q.Cancel(ctx, k)
				case 4:
					_, err = q.Reschedule(ctx, k, at)
					if errors.Is(err, ErrInFlight) {
						err = nil
					}
				case 5:
					_, err = q.Requeue(ctx, k)
				case 6:
					_, err = q.Get(ctx, k)
					if errors.Is(err, ErrNotFound) {
						err = nil
					}
				case 7:
					if rand.IntN(20) == 0 {
						err = q.Pause(ctx)
						time.Sleep(20 * time.Millisecond)
						if err == nil {
							err = q.Resume(ctx)
						}
					}
				}
				require.NoError(t, err)
				if rand.IntN(50) == 0 {
					for _, st := range []State{StateScheduled, StateRetrying, StateInFlight, StateDead, StateDone, StateCancelled} {
						_, _, err := q.List(ctx, st, "", 10)
						require.NoError(t, err)
					}
				}
				time.Sleep(time.Millisecond)
			}
			stopRun()
			awaitDone(t, "the workload goroutines", wg.Wait)
			require.NotZero(t, ran.Load(), "no handler ran")
			checkInvariants(t, q)
			// Drain: everything left ends somewhere final.
			stop := run(t, q, func(context.Context, Task) error { return nil })
			eventually(t, patience, "drained", func() bool {
				s := totals(t, q)
				return s.Due == 0 && s.Scheduled == 0 && s.InFlight == 0
			})
			stop()
			checkInvariants(t, q)
		})
	}
}
