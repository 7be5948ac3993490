package timingwheel

import (
	"bytes"
	"runtime"
	"sync"
)

type execMode uint8

const (
	execGoroutine execMode = iota // a new goroutine per callback, as time.AfterFunc
	execInline                    // on the poller goroutine
	execPool                      // on a fixed set of workers
)

// executor runs the callbacks of expired timers, never with the wheel locked.
type executor struct {
	mode execMode
	pool *pool // execPool only
}

func (e *executor) run(f func()) {
	switch e.mode {
	case execInline:
		f()
	case execPool:
		e.pool.push(f)
	default:
		go f()
	}
}

func (e *executor) runAll(fs []func()) {
	switch e.mode {
	case execPool:
		e.pool.push(fs...)
	default:
		for _, f := range fs {
			e.run(f)
		}
	}
}

// pool is a fixed set of workers fed by an unbounded FIFO. push never blocks:
// an expiration must not wait for a callback of another timer to finish.
type pool struct {
	wg      sync.WaitGroup
	workers sync.Map // goroutine id -> struct{}: Stop from a callback must not wait for its own worker

	mu     sync.Mutex // protects the fields below
	cond   sync.Cond  // signalled when queue grows or closed is set
	queue  []func()
	head   int // queue[head:] is waiting
	closed bool
}

func newPool(workers int) *pool {
	p := &pool{}
	p.cond.L = &p.mu
	p.wg.Add(workers)
	for range workers {
		go p.work()
	}
	return p
}

func (p *pool) push(fs ...func()) {
	p.mu.Lock()
	if p.closed {
		// A timer that expired just before its wheel stopped still runs: its
		// Stop has returned or will return false.
		p.mu.Unlock()
		for _, f := range fs {
			go f()
		}
		return
	}
	p.queue = append(p.queue, fs...)
	if len(fs) == 1 {
		p.cond.Signal()
	} else {
		p.cond.Broadcast()
	}
	p.mu.Unlock()
}

func (p *pool) work() {
	defer p.wg.Done()
	id := goroutineID()
	p.workers.Store(id, struct{}{})
	defer p.workers.Delete(id)
	p.mu.Lock()
	for {
		for p.head == len(p.queue) && !p.closed {
			p.cond.Wait()
		}
		if p.head == len(p.queue) { // closed and drained
			p.mu.Unlock()
			return
		}
		f := p.queue[p.head]
		p.queue[p.head] = nil
		p.head++
		if p.head == len(p.queue) {
			p.queue, p.head = p.queue[:0], 0
		}
		p.mu.Unlock()
		f()
		p.mu.Lock()
	}
}

// close lets the workers finish what is queued, then waits for them to exit;
// called from a callback on one of the workers, it does not wait, since that
// worker cannot exit before the callback returns. Every Stop calls it, so it
// may be called more than once, concurrently.
func (p *pool) close(caller uint64) {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	p.mu.Unlock()
	if _, onWorker := p.workers.Load(caller); !onWorker {
		p.wg.Wait()
	}
}

// goroutineID returns the running goroutine's id, read from its stack
// header ("goroutine 18 [running]:"). It is slow (about a microsecond) and is
// used only when a wheel stops, to avoid waiting for the goroutine that is
// calling Stop from inside a callback.
func goroutineID() uint64 {
	var buf [32]byte
	s := buf[:runtime.Stack(buf[:], false)]
	s = bytes.TrimPrefix(s, []byte("goroutine "))
	var id uint64
	for _, c := range s {
		if c < '0' || c > '9' {
			break
		}
		id = id*10 + uint64(c-'0')
	}
	return id
}
