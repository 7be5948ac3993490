package schedules

import "context"

// Definitions is where the definitions of one namespace are kept, in their
// stored form (see stored), by name: the one place every timerd process of
// the namespace reads them from. Each method is atomic on its name (All
// reads one consistent snapshot); an implementation is safe for concurrent
// use. There is one for each durable store timerd runs on, in the same
// database or Redis, so that a process needs one connection string.
type Definitions interface {
	// Swap stores raw under name and returns the stored form it replaced,
	// nil if there was none.
	Swap(ctx context.Context, name string, raw []byte) (old []byte, err error)
	// Get returns the stored form under name, nil if there is none.
	Get(ctx context.Context, name string) ([]byte, error)
	// All returns every stored form, by name.
	All(ctx context.Context) (map[string][]byte, error)
	// Delete removes name and returns the stored form it held, nil if none.
	Delete(ctx context.Context, name string) (old []byte, err error)
}

// WithErrors is d with every error passed through wrap: the store's own
// Unavailable (rediswheel's, pgwheel's, sqlitewheel's), which wraps
// durable.ErrUnavailable around a failure retrying may heal, so that the
// API answers 503 for it on the definitions as on the Queue's calls. The
// server passes it where it opens the store; this package imports none.
func WithErrors(d Definitions, wrap func(error) error) Definitions {
	return wrapped{d, wrap}
}

type wrapped struct {
	d    Definitions
	wrap func(error) error
}

func (w wrapped) Swap(ctx context.Context, name string, raw []byte) ([]byte, error) {
	old, err := w.d.Swap(ctx, name, raw)
	return old, w.err(err)
}

func (w wrapped) Get(ctx context.Context, name string) ([]byte, error) {
	raw, err := w.d.Get(ctx, name)
	return raw, w.err(err)
}

func (w wrapped) All(ctx context.Context) (map[string][]byte, error) {
	all, err := w.d.All(ctx)
	return all, w.err(err)
}

func (w wrapped) Delete(ctx context.Context, name string) ([]byte, error) {
	old, err := w.d.Delete(ctx, name)
	return old, w.err(err)
}

func (w wrapped) err(err error) error {
	if err == nil {
		return nil
	}
	return w.wrap(err)
}
