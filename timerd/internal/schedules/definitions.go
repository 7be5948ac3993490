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
