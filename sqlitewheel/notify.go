package sqlitewheel

import (
	"context"
	"fmt"
	"sync"

	"modernc.org/sqlite"
)

var _ interface {
	Notify(ctx context.Context, wake func(due int64), report func(error))
} = (*Store)(nil) // durable.Notifier

// wakes carries the due time of tasks AddTx stored in the open transaction
// of the writer connection to the Queue's Runs when it commits. There is
// one writer connection, so there is at most one such transaction: its
// commit hook hands pending to every listener, its rollback hook drops it.
//
// mu protects every field; the hooks run inside Commit and Rollback, on the
// application's goroutine, and only take mu.
type wakes struct {
	mu        sync.Mutex
	pending   int64                         // earliest due time AddTx stored since the last commit or rollback; 0: none
	listeners map[*func(due int64)]struct{} // the wake of each Notify running
	hooked    any                           // the driver connection whose hooks are set
}

// pend records a task of the open transaction due at due.
func (w *wakes) pend(due int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.pending == 0 || due < w.pending {
		w.pending = due
	}
}

// committed is the writer connection's commit hook: it never vetoes.
func (w *wakes) committed() int32 {
	w.mu.Lock()
	due := w.pending
	w.pending = 0
	var ls []func(int64)
	if due != 0 {
		for l := range w.listeners {
			ls = append(ls, *l)
		}
	}
	w.mu.Unlock()
	for _, wake := range ls {
		wake(due) // returns at once (durable.Notifier)
	}
	return 0
}

func (w *wakes) rolledBack() {
	w.mu.Lock()
	w.pending = 0
	w.mu.Unlock()
}

// Notify is durable.Notifier's Notify within the process: it calls wake(0)
// once it listens, then wake(due) when a transaction in which AddTx stored
// a task due at due commits, until ctx ends. The Queue's own writes need no
// announcement (the Queue wakes its Runs itself). It sets SQLite's commit
// and rollback hooks on the writer connection, so it waits for that
// connection if an application's transaction holds it. A failure (the
// store closed) goes to report and Notify waits for ctx: a Run still
// polls, so AddTx's tasks are then claimed at most PollInterval late.
func (s *Store) Notify(ctx context.Context, wake func(due int64), report func(error)) {
	if err := s.hook(ctx); err != nil {
		if ctx.Err() == nil {
			report(err)
		}
		<-ctx.Done()
		return
	}
	w := &s.wakes
	w.mu.Lock()
	if w.listeners == nil {
		w.listeners = map[*func(int64)]struct{}{}
	}
	w.listeners[&wake] = struct{}{}
	w.mu.Unlock()
	wake(0)
	<-ctx.Done()
	w.mu.Lock()
	delete(w.listeners, &wake)
	w.mu.Unlock()
}

// hook sets the wakes' hooks on the writer connection, unless they are set
// on it already.
func (s *Store) hook(ctx context.Context) error {
	conn, err := s.w.Conn(ctx)
	if err != nil {
		return classify(err)
	}
	defer conn.Close()
	return conn.Raw(func(dc any) error {
		w := &s.wakes
		w.mu.Lock()
		defer w.mu.Unlock()
		if w.hooked == dc {
			return nil
		}
		h, ok := dc.(sqlite.HookRegisterer)
		if !ok {
			return fmt.Errorf("sqlitewheel: notify: the driver's connection %T has no commit hook", dc)
		}
		h.RegisterCommitHook(w.committed)
		h.RegisterRollbackHook(w.rolledBack)
		w.hooked = dc
		return nil
	})
}
