package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/redis/go-redis/v9"
)

// With Redis unreachable (nothing listens on the port) or the client
// closed, every durable.Store method fails with an error wrapping
// durable.ErrUnavailable, never ErrUnrecoverable: retrying may heal it.
// Needs no server.
func TestUnreachableRedisIsUnavailable(t *testing.T) {
	for _, closed := range []bool{false, true} {
		t.Run(fmt.Sprint("closed=", closed), func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialerRetries: 1})
			defer c.Close()
			if closed {
				c.Close()
			}
			st, err := NewStore(c, "unreachable", 2)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			lim := durable.Limits{MaxAttempts: 3, MaxDead: 10, MaxRetained: 10, ReapBatch: 10, MaxUnconfirmed: 3}
			req := &durable.AddRequest{Key: "k", At: 1}
			st.Add(ctx, []*durable.AddRequest{req})
			errs := map[string]error{"Add": req.Err}
			_, errs["Claim"] = st.Claim(ctx, 0, 1, time.Second, lim)
			_, errs["Extend"] = st.Extend(ctx, 0, time.Second, []durable.Lease{{Key: "k", Token: "1"}})
			_, errs["Settle"] = st.Settle(ctx, 0, lim, []durable.Outcome{{Key: "k", Token: "1", Kind: durable.OutcomeDone}})
			_, errs["Cancel"] = st.Cancel(ctx, "k", 0, 10)
			_, errs["Reschedule"] = st.Reschedule(ctx, "k", 1)
			_, _, errs["Requeue"] = st.Requeue(ctx, "k")
			_, errs["Get"] = st.Get(ctx, "k")
			_, _, errs["List"] = st.List(ctx, durable.StateDead, nil, 10)
			_, errs["Dead"] = st.Dead(ctx, 10)
			_, errs["Stats"] = st.Stats(ctx)
			errs["Pause"] = st.Pause(ctx, true)
			_, errs["Periodic"] = st.Periodic(ctx, durable.PeriodicRead, "p", 0, 0)
			for op, err := range errs {
				if !errors.Is(err, durable.ErrUnavailable) || errors.Is(err, durable.ErrUnrecoverable) {
					t.Errorf("%s: %v, want an error wrapping durable.ErrUnavailable only", op, err)
				}
			}
		})
	}
}

// replyError is an error reply of a server, as go-redis returns one.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// Replies of a server that cannot answer now wrap durable.ErrUnavailable;
// those of a wrong command or a refused login do not.
func TestUnavailableReplies(t *testing.T) {
	for reply, want := range map[string]bool{
		"LOADING Redis is loading the dataset in memory":                    true,
		"TRYAGAIN Multiple keys request during rehashing":                   true,
		"CLUSTERDOWN The cluster is down":                                   true,
		"MASTERDOWN Link with MASTER is down":                               true,
		"READONLY You can't write against a read only replica.":             true,
		"BUSY Redis is busy running a script.":                              true,
		"NOREPLICAS Not enough good replicas to write.":                     true,
		"ERR unknown command 'EVALSHA'":                                     false,
		"WRONGTYPE Operation against a key holding the wrong kind of value": false,
		"NOSCRIPT No matching script.":                                      false,
	} {
		err := fmt.Errorf("rediswheel: op: %w", replyError(reply))
		unavailable(&err)
		if errors.Is(err, durable.ErrUnavailable) != want {
			t.Errorf("%q: %v, want unavailable %v", reply, err, want)
		}
	}
}
