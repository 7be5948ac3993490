package durable

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Add schedules a task under key to be delivered once the store's clock reaches
// at, rounded up to the millisecond; a past at is due at once. It is
// idempotent by key: if key is already scheduled, waiting for a retry, in
// flight, dead or retained (Options.Retention), Add changes nothing and
// returns false. A successful Add is acknowledged by the store, so it is as
// durable as the store's commit (Redis's persistence settings; a database
// commit on PostgreSQL and SQLite).
//
// The key is 1..MaxKeyLen bytes of UTF-8 without NUL, on every store, and
// the payload at most MaxPayloadLen bytes; Add returns an error wrapping
// ErrKey or ErrPayload for others, and stores nothing. opts set the task's
// own type, timeout, attempts and backoff, stored with it (see TaskOption); a
// bad one makes Add return an error wrapping ErrTaskOption and store
// nothing. A refused Add (false) keeps the existing task's options.
//
// Adds made concurrently on one Queue share round trips: while one is on its
// way to the store, those that arrive wait and then go out together, in one
// Store.Add (on Redis one script call on a single server, one per shard on
// a cluster; one transaction on a SQL store), so many goroutines adding at
// once cost fewer round trips and less store time than one call each. If ctx
// ends before the reply, Add returns ctx's error and the task may or may not
// have been stored.
func (q *Queue) Add(ctx context.Context, key string, payload []byte, at time.Time, opts ...TaskOption) (added bool, err error) {
	status, err := q.add(ctx, AddRequest{Key: key, Payload: payload, At: unixMilliCeil(at)}, opts)
	return status == AddStored, err
}

// AddAfter is Add with a due time of delay after the store's clock at the moment
// the task is stored, so the caller's clock does not matter. The due time is
// rounded up to the millisecond, so the task is never due before that moment
// plus delay, to the microsecond of the store's clock.
func (q *Queue) AddAfter(ctx context.Context, key string, payload []byte, delay time.Duration, opts ...TaskOption) (added bool, err error) {
	status, err := q.add(ctx, AddRequest{Relative: true, Key: key, Payload: payload, At: durationMilliCeil(delay)}, opts)
	return status == AddStored, err
}

// Replace stores the task under key with a new payload, due time and options
// (none given: the Queue's), whether or not it existed; a scheduled,
// retrying, dead or retained task starts over with no attempts and no
// delivery history. A task in flight is left alone and Replace returns an
// error wrapping ErrInFlight. An Add of the key that goes to the store in
// the same group commit (see Add) is taken as coming after the Replace,
// whichever was called first: it returns false, and the Replace's task is
// stored.
func (q *Queue) Replace(ctx context.Context, key string, payload []byte, at time.Time, opts ...TaskOption) error {
	status, err := q.add(ctx, AddRequest{Replace: true, Key: key, Payload: payload, At: unixMilliCeil(at)}, opts)
	if err == nil && status == AddInFlight {
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

// maxCoalesced caps the Adds that go out in one Store.Add.
const maxCoalesced = 1024

// AddBatch is Add for many tasks at once: added[i] reports whether items[i]
// was stored, exactly as Add would. Within one call, a key that appears
// twice is stored once, from its first item. The whole batch goes to the
// store in one Store.Add (on Redis: up to 256 items per script call, on a
// cluster 256 of one shard, all the calls in one pipeline), so a batch costs
// far fewer round trips and far less store time per task than as many Adds.
//
// Each part the store writes atomically (a Redis script call) is, the batch
// as a whole is not: on error, any
// subset of the items may have been stored. Calling AddBatch again is safe,
// but reports the items stored the first time as not added. It checks every
// key, payload and option before storing any, and returns an error wrapping
// ErrKey, ErrPayload or ErrTaskOption if one is bad: then nothing is stored.
func (q *Queue) AddBatch(ctx context.Context, items []Item) (added []bool, err error) {
	reqs := make([]*AddRequest, len(items))
	for i, it := range items {
		if err := checkKey(it.Key); err != nil {
			return nil, fmt.Errorf("%w (item %d)", err, i)
		}
		if err := checkPayload(it.Payload); err != nil {
			return nil, fmt.Errorf("%w (item %d, key %q)", err, i, it.Key)
		}
		p, err := policyOf(it.Options)
		if err != nil {
			return nil, fmt.Errorf("%w (item %d, key %q)", err, i, it.Key)
		}
		reqs[i] = &AddRequest{Key: it.Key, Payload: it.Payload, At: unixMilliCeil(it.At), Policy: p.Policy}
	}
	q.sendAdds(ctx, reqs)
	added = make([]bool, len(items))
	var errs []error
	seen := map[error]bool{} // the tasks of a failed call share its error
	for i, r := range reqs {
		added[i] = r.Status == AddStored
		if r.Err != nil && !seen[r.Err] {
			seen[r.Err] = true
			errs = append(errs, r.Err)
		}
	}
	return added, errors.Join(errs...)
}

// adder coalesces the Adds, AddAfters and Replaces made concurrently on one
// Queue, a group commit: while one caller (the leader) has a pipeline in
// flight, the requests that arrive wait in pending; when its reply is in,
// the leader hands the lead to the first of them, which sends all of them
// (up to maxCoalesced) as one Store.Add: on Redis one pipeline, one script
// call for all shards on a single server, one per shard on a cluster (see
// rediswheel's add.go). So a lone Add costs one round trip as before, and n
// concurrent Adds cost about two round trips and a few script calls among
// them, not n of each.
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
	pending []*AddRequest // FIFO
	// lastBatch is the size of the last batch sent: more than one means
	// Adds come concurrently, and a new leader yields once before it takes
	// its batch (see add).
	lastBatch int
}

// add runs one request, with the task options opts, through the adder and
// returns its status.
func (q *Queue) add(ctx context.Context, r AddRequest, opts []TaskOption) (AddStatus, error) {
	if err := checkKey(r.Key); err != nil {
		return 0, err
	}
	if err := checkPayload(r.Payload); err != nil {
		return 0, err
	}
	if len(opts) > 0 {
		p, err := policyOf(opts)
		if err != nil {
			return 0, err
		}
		r.Policy = p.Policy
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
		return r.Status, r.Err
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
		return r.Status, r.Err
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
func (q *Queue) leadAdds(ctx context.Context, r *AddRequest, yield bool) (AddStatus, error) {
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
			return r.Status, r.Err
		default:
		}
		var batch []*AddRequest
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

// sendAdds stores reqs through the store, each key once (see fold), wakes
// this Queue's Runs for the earliest task stored, and reports the batch to
// the Observer.
func (q *Queue) sendAdds(ctx context.Context, reqs []*AddRequest) {
	sent, repeats := fold(reqs)
	if first := q.store.Add(ctx, sent); first >= 0 {
		q.wakeAdded(sent, first)
	}
	for _, p := range repeats {
		p.answer()
	}
	q.observeAdds(reqs)
}

// wakeAdded wakes this Queue's Runs for the tasks of reqs the store
// stored, first being the earliest: by partition when the store is a
// Partitioner, each partition at its earliest absolute due time or at
// first (a relative due time is the store's to compute: first, no later
// than it, is never late).
func (q *Queue) wakeAdded(reqs []*AddRequest, first int64) {
	pt, ok := q.store.(Partitioner)
	if !ok || q.parts == 1 {
		q.wake(first)
		return
	}
	due := map[int]int64{}
	for _, r := range reqs {
		if r.Status != AddStored || r.Err != nil {
			continue
		}
		d := first
		if !r.Relative {
			d = max(r.At, first)
		}
		p := pt.Partition(r.Key)
		if e, seen := due[p]; !seen || d < e {
			due[p] = d
		}
	}
	q.wakePartitions(due)
}

// fold picks, for each key that appears more than once in reqs (concurrent
// calls that met in one group commit, or AddBatch's repeated items), the one
// request the store gets: the last Replace if there is one, else the first
// Add. The others are its repeats, answered from its reply as if the
// Replaces had come first, in their order, then the Adds (any order is
// true of calls that were all under way together): an earlier Replace is
// acknowledged as the last one is (stored, then replaced; or in flight),
// and an Add finds the key existing (AddExists), since after a Replace or
// a first Add it does. So an acknowledged Replace is never lost to an Add,
// and an Add's reply says what happened: its task was not stored. A store
// gets each key once in a call (see Store's Add).
func fold(reqs []*AddRequest) (sent []*AddRequest, repeats []repeat) {
	if len(reqs) < 2 {
		return reqs, nil
	}
	kept := make(map[string]*AddRequest, len(reqs))
	for _, r := range reqs {
		if k := kept[r.Key]; k == nil || r.Replace {
			kept[r.Key] = r
		}
	}
	if len(kept) == len(reqs) {
		return reqs, nil
	}
	sent = make([]*AddRequest, 0, len(kept))
	for _, r := range reqs {
		if k := kept[r.Key]; k == r {
			sent = append(sent, r)
		} else {
			repeats = append(repeats, repeat{r: r, of: k})
		}
	}
	return sent, repeats
}

// A repeat is a request folded into another of its key (see fold).
type repeat struct{ r, of *AddRequest }

// answer sets p.r's reply from p.of's, once the store has answered it.
func (p repeat) answer() {
	p.r.Status, p.r.Err = p.of.Status, p.of.Err
	if p.of.Err == nil && !p.r.Replace {
		p.r.Status = AddExists
	}
}
