package rediswheel

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Add schedules a task under key to be delivered once Redis's clock reaches
// at, rounded up to the millisecond; a past at is due at once. It is
// idempotent by key: if key is already scheduled, waiting for a retry, in
// flight, dead or retained (Options.Retention), Add changes nothing and
// returns false. A successful Add is acknowledged by Redis, so it is as
// durable as the server's persistence.
//
// opts set the task's own type, timeout, attempts and backoff, stored with it
// (see TaskOption); a bad one makes Add return an error wrapping
// ErrTaskOption and store nothing. A refused Add (false) keeps the existing
// task's options.
//
// Adds made concurrently on one Queue share round trips: while one is on its
// way to Redis, those that arrive wait and then go out together, in one
// script call on a single server (one per shard on a cluster), so many
// goroutines adding at once cost fewer round trips and less Redis time than
// one call each. If ctx
// ends before the reply, Add returns ctx's error and the task may or may not
// have been stored.
func (q *Queue) Add(ctx context.Context, key string, payload []byte, at time.Time, opts ...TaskOption) (added bool, err error) {
	status, err := q.add(ctx, addRequest{mode: addNX, base: baseAbs, key: key, payload: payload, at: unixMilliCeil(at)}, opts)
	return status == addStored, err
}

// AddAfter is Add with a due time of delay after Redis's clock at the moment
// the task is stored, so the caller's clock does not matter. The due time is
// rounded up to the millisecond, so the task is never due before that moment
// plus delay, to the microsecond of Redis's clock.
func (q *Queue) AddAfter(ctx context.Context, key string, payload []byte, delay time.Duration, opts ...TaskOption) (added bool, err error) {
	status, err := q.add(ctx, addRequest{mode: addNX, base: baseRel, key: key, payload: payload, at: durationMilliCeil(delay)}, opts)
	return status == addStored, err
}

// Replace stores the task under key with a new payload, due time and options
// (none given: the Queue's), whether or not it existed; a scheduled,
// retrying, dead or retained task starts over with no attempts and no
// delivery history. A task in flight is left alone and Replace returns an
// error wrapping ErrInFlight.
func (q *Queue) Replace(ctx context.Context, key string, payload []byte, at time.Time, opts ...TaskOption) error {
	status, err := q.add(ctx, addRequest{mode: addReplace, base: baseAbs, key: key, payload: payload, at: unixMilliCeil(at)}, opts)
	if err == nil && status == addInFlight {
		err = fmt.Errorf("%w: %q", ErrInFlight, key)
	}
	return err
}

// An Item is one task for AddBatch, with Add's arguments.
type Item struct {
	Key     string
	Payload []byte
	At      time.Time
	Options []TaskOption
}

// addMode says what add.lua does with a key that exists; lua/add.lua spells
// the same names and rejects any other.
type addMode string

const (
	addNX      addMode = "nx"      // store only a new key (Add)
	addReplace addMode = "replace" // overwrite any key not in flight (Replace)
)

// timeBase says what a task's time argument to add.lua counts from; the
// script rejects any other.
type timeBase string

const (
	baseAbs timeBase = "abs" // Unix ms
	baseRel timeBase = "rel" // ms after Redis's clock when the script runs
)

// The add script's status per task (lua/add.lua).
const (
	addInFlight = -1 // replace: the key is in flight, nothing changed
	addExists   = 0  // nx: the key exists in some state, nothing changed
	addStored   = 1
)

const (
	// maxAddBatch caps the tasks of one add script call: each costs about a
	// microsecond of Redis time, so a call stays well under a millisecond.
	maxAddBatch = 256
	// maxCoalesced caps the Adds that go out in one pipeline.
	maxCoalesced = 1024
)

// AddBatch is Add for many tasks at once: added[i] reports whether items[i]
// was stored, exactly as Add would. Within one call, a key that appears
// twice is stored once, from its first item. Up to 256 items are stored by
// one script call (on a cluster, 256 of one shard), and all the calls go out
// in one pipeline, so a batch costs far fewer round trips and far less Redis
// time per task than as many Adds.
//
// Each script call is atomic, the batch as a whole is not: on error, any
// subset of the items may have been stored. Calling AddBatch again is safe,
// but reports the items stored the first time as not added. It checks every
// key and option before storing any, and returns an error wrapping ErrKey or
// ErrTaskOption if one is bad.
func (q *Queue) AddBatch(ctx context.Context, items []Item) (added []bool, err error) {
	reqs := make([]*addRequest, len(items))
	for i, it := range items {
		if err := checkKey(it.Key); err != nil {
			return nil, err
		}
		p, err := policyOf(it.Options)
		if err != nil {
			return nil, fmt.Errorf("%w (item %d, key %q)", err, i, it.Key)
		}
		reqs[i] = &addRequest{mode: addNX, base: baseAbs, key: it.Key, payload: it.Payload, at: unixMilliCeil(it.At), policy: encodePolicy(p)}
	}
	q.sendAdds(ctx, reqs)
	added = make([]bool, len(items))
	var errs []error
	seen := map[error]bool{} // the tasks of a failed call share its error
	for i, r := range reqs {
		added[i] = r.status == addStored
		if r.err != nil && !seen[r.err] {
			seen[r.err] = true
			errs = append(errs, r.err)
		}
	}
	return added, errors.Join(errs...)
}

// An addRequest is one task on its way to the add script.
type addRequest struct {
	mode    addMode
	base    timeBase
	key     string
	payload []byte
	at      int64  // ms, counted from base
	policy  string // the task record's tail: see encodePolicy

	// Set by sendAdds.
	status int64 // addStored, addExists or addInFlight
	err    error

	// For a coalesced Add (see adder), each closed at most once.
	done chan struct{} // status and err are set
	lead chan struct{} // this request's caller must send the next batch
	quit bool          // its caller has returned; guarded by adder.mu
}

// adder coalesces the Adds, AddAfters and Replaces made concurrently on one
// Queue, a group commit: while one caller (the leader) has a pipeline in
// flight, the requests that arrive wait in pending; when its reply is in,
// the leader hands the lead to the first of them, which sends all of them
// (up to maxCoalesced) as one pipeline: one script call for all shards on a
// single server, one per shard on a cluster (see sendAdds). So a lone Add
// costs one round trip as before, and n concurrent Adds cost about two round
// trips and a few script calls among them, not n of each.
//
// One batch in flight at a time, not more: a second leader sending while the
// first waits halves the batches, and with them what merging buys. Measured
// with 16 goroutines adding 40,000 tasks on one Redis, 2 vCPUs: two leaders
// gave 44-49k adds/s against 42-44k for one, at the same or more Redis CPU
// per add (14-17 µs against 14), with 6 tasks per script call against 14:
// not worth a second protocol.
//
// No goroutine is started: every batch is sent by the goroutine of one of
// its own callers, and the lead passes on until pending is empty.
type adder struct {
	mu      sync.Mutex
	busy    bool          // a leader is sending; while busy, someone will send pending
	pending []*addRequest // FIFO
	// lastBatch is the size of the last batch sent: more than one means
	// Adds come concurrently, and a new leader yields once before it takes
	// its batch (see add).
	lastBatch int

	// split is set once the server refused an add call that spans shards
	// (CROSSSLOT): from then on each call keeps to one shard. See sendAdds.
	split atomic.Bool
}

// add runs one request, with the task options opts, through the adder and
// returns its status.
func (q *Queue) add(ctx context.Context, r addRequest, opts []TaskOption) (int64, error) {
	if err := checkKey(r.key); err != nil {
		return 0, err
	}
	r.policy = noPolicy
	if len(opts) > 0 {
		p, err := policyOf(opts)
		if err != nil {
			return 0, err
		}
		r.policy = encodePolicy(p)
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	r.done, r.lead = make(chan struct{}), make(chan struct{})
	a := &q.adds
	a.mu.Lock()
	a.pending = append(a.pending, &r)
	if !a.busy {
		a.busy = true
		crowd := a.lastBatch > 1
		a.mu.Unlock()
		return q.leadAdds(ctx, &r, crowd)
	}
	a.mu.Unlock()
	select {
	case <-r.done:
		return r.status, r.err
	case <-r.lead:
		return q.leadAdds(ctx, &r, true)
	case <-ctx.Done():
	}
	a.mu.Lock()
	select {
	case <-r.lead:
		// Chosen as leader meanwhile: others wait on us.
		a.mu.Unlock()
		return q.leadAdds(ctx, &r, true)
	case <-r.done:
		a.mu.Unlock()
		return r.status, r.err
	default:
	}
	r.quit = true // if still pending, it is never sent
	a.mu.Unlock()
	return 0, ctx.Err()
}

// leadAdds sends pending requests, a batch at a time, until r's is done, then
// hands the lead to the next waiting request or, if none, ends the busy
// spell. It sends with ctx's values but not its cancellation: the batch
// belongs to other callers too.
//
// With yield, it first lets other goroutines run once: a leader handed the
// lead, or one starting while Adds come concurrently (the last batch had more
// than one), would otherwise take only the requests that arrived while the
// last batch was in flight, and the callers that batch released would add
// again just too late, to wait for the batch after. Yielding lets them join:
// with 16 goroutines adding 40,000 tasks on one Redis, 2 vCPUs, script calls
// grew from 8.5 to 14 tasks on average and adds/s by about a fifth (43-49k
// to 55-59k; Redis CPU per add 12-14 to 10.4-11 µs). A lone caller, adding
// one task at a time, never yields.
func (q *Queue) leadAdds(ctx context.Context, r *addRequest, yield bool) (int64, error) {
	if yield {
		runtime.Gosched()
	}
	a := &q.adds
	sendCtx := context.WithoutCancel(ctx)
	for {
		a.mu.Lock()
		select {
		case <-r.done:
			for len(a.pending) > 0 && a.pending[0].quit {
				a.pending = a.pending[1:]
			}
			if len(a.pending) == 0 {
				a.pending, a.busy = nil, false
			} else {
				close(a.pending[0].lead)
			}
			a.mu.Unlock()
			return r.status, r.err
		default:
		}
		var batch []*addRequest
		n := 0
		for ; n < len(a.pending) && len(batch) < maxCoalesced; n++ {
			if p := a.pending[n]; !p.quit {
				batch = append(batch, p)
			}
		}
		a.pending = a.pending[n:]
		a.lastBatch = len(batch)
		a.mu.Unlock()
		if len(batch) == 0 {
			continue
		}
		q.sendAdds(sendCtx, batch)
		for _, p := range batch {
			close(p.done)
		}
	}
}

// addStride is the arguments per task of an add call: key, time, payload,
// policy (lua/add.lua).
const addStride = 4

// An addCall is one add script call: tasks of one mode and base, from one
// shard or, on a single server, from several (see sendAdds).
type addCall struct {
	shards []int         // the shards whose keys it passes, in KEYS order
	counts []int         // its tasks per shard, in the same order
	reqs   []*addRequest // its tasks, shard by shard
	cmd    *redis.Cmd
}

// put appends rs, all of shard, to c.
func (c *addCall) put(shard int, rs []*addRequest) {
	c.shards = append(c.shards, shard)
	c.counts = append(c.counts, len(rs))
	c.reqs = append(c.reqs, rs...)
}

// sendAdds stores reqs with as few script calls as it may, all in one
// pipeline, and sets each request's status and err. Requests that share a
// failed call share its error value.
//
// On a cluster a script call must stay in one slot, so there is one call per
// shard, mode and base (and per maxAddBatch tasks). A *redis.Client talks to
// one server, where a script may touch any keys: there one call carries every
// shard's tasks of one mode and base. That is the point of the group commit:
// n concurrent Adds spread over 16 shards cost one script call, not about
// min(n, 16), and a script call costs Redis far more than one more task in
// it (measured in docs/bench/redis.md). A server that refuses keys of several
// slots (a *redis.Client on a cluster node, a proxy) answers CROSSSLOT before
// running anything: the tasks are then sent shard by shard, and this Queue
// never merges shards again.
func (q *Queue) sendAdds(ctx context.Context, reqs []*addRequest) {
	merge := q.oneServer && !q.adds.split.Load()
	calls := q.addCalls(reqs, merge)
	q.runAdds(ctx, calls)
	if merge {
		var again []*addRequest
		sent := calls[:0:0]
		for _, c := range calls {
			if redis.HasErrorPrefix(c.cmd.Err(), "CROSSSLOT") {
				again = append(again, c.reqs...)
			} else {
				sent = append(sent, c)
			}
		}
		if len(again) > 0 {
			q.adds.split.Store(true)
			retry := q.addCalls(again, false)
			q.runAdds(ctx, retry)
			calls = append(sent, retry...)
		}
	}
	first := int64(-1)
	for _, c := range calls {
		res, err := c.cmd.Int64Slice()
		if err == nil && len(res) != 1+len(c.reqs) {
			err = fmt.Errorf("unexpected reply %v", res)
		}
		if err != nil {
			switch {
			case len(c.reqs) == 1:
				err = fmt.Errorf("rediswheel: add %q: %w", c.reqs[0].key, err)
			case len(c.shards) == 1:
				err = fmt.Errorf("rediswheel: add %d tasks to shard %d: %w", len(c.reqs), c.shards[0], err)
			default:
				err = fmt.Errorf("rediswheel: add %d tasks to %d shards: %w", len(c.reqs), len(c.shards), err)
			}
			for _, r := range c.reqs {
				r.err = err
			}
			continue
		}
		for j, r := range c.reqs {
			r.status = res[1+j]
		}
		if res[0] >= 0 && (first < 0 || res[0] < first) {
			first = res[0]
		}
	}
	if first >= 0 {
		q.wake(first)
	}
	q.observeAdds(calls)
}

// addCalls splits reqs into script calls of one mode and base and at most
// maxAddBatch tasks: one shard each, or, with merge, any number of shards.
func (q *Queue) addCalls(reqs []*addRequest, merge bool) []*addCall {
	type bucket struct {
		shard int
		mode  addMode
		base  timeBase
	}
	var order []bucket
	byBucket := map[bucket][]*addRequest{}
	for _, r := range reqs {
		b := bucket{q.shard(r.key), r.mode, r.base}
		if _, ok := byBucket[b]; !ok {
			order = append(order, b)
		}
		byBucket[b] = append(byBucket[b], r)
	}
	var calls []*addCall
	open := map[bucket]*addCall{}
	for _, b := range order {
		g := b
		if merge {
			g.shard = -1 // one call for all shards
		}
		for rs := byBucket[b]; len(rs) > 0; {
			c := open[g]
			if c == nil || len(c.reqs) == maxAddBatch {
				c = &addCall{}
				open[g] = c
				calls = append(calls, c)
			}
			n := min(len(rs), maxAddBatch-len(c.reqs))
			c.put(b.shard, rs[:n])
			rs = rs[n:]
		}
	}
	return calls
}

// runAdds runs calls, one script call each, in one pipeline (a lone call
// goes out on its own), and leaves each reply in its cmd.
func (q *Queue) runAdds(ctx context.Context, calls []*addCall) {
	keys := func(c *addCall) []string {
		if len(c.shards) == 1 {
			return q.keys[c.shards[0]]
		}
		k := make([]string, 0, len(c.shards)*len(q.keys[0]))
		for _, s := range c.shards {
			k = append(k, q.keys[s]...)
		}
		return k
	}
	args := func(c *addCall) []any {
		a := make([]any, 0, 2+len(c.shards)+addStride*len(c.reqs))
		a = append(a, string(c.reqs[0].mode), string(c.reqs[0].base))
		rs := c.reqs
		for _, n := range c.counts {
			a = append(a, n)
			for _, r := range rs[:n] {
				a = append(a, r.key, r.at, r.payload, r.policy)
			}
			rs = rs[n:]
		}
		return a
	}
	if len(calls) == 1 {
		c := calls[0]
		c.cmd = addScript.Run(ctx, q.client, keys(c), args(c)...)
		return
	}
	exec := func(cs []*addCall) {
		// Exec's own error is the first failed command's; each is checked
		// by the caller.
		_, _ = q.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, c := range cs {
				c.cmd = addScript.EvalSha(ctx, p, keys(c), args(c)...)
			}
			return nil
		})
	}
	exec(calls)
	// A server that has not seen the script yet (new, restarted, failed
	// over) ran none of those calls: load it and send them again.
	var retry []*addCall
	for _, c := range calls {
		if redis.HasErrorPrefix(c.cmd.Err(), "NOSCRIPT") {
			retry = append(retry, c)
		}
	}
	if len(retry) > 0 {
		if err := addScript.Load(ctx, q.client).Err(); err != nil {
			for _, c := range retry {
				c.cmd = redis.NewCmd(ctx)
				c.cmd.SetErr(err)
			}
			return
		}
		exec(retry)
	}
}
