package timingwheel

import "sync"

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
	wg sync.WaitGroup

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

// close lets the workers finish what is queued, then waits for them to exit.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	p.cond.Broadcast()
	p.mu.Unlock()
	p.wg.Wait()
}
