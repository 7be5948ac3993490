package schedules

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"

	"github.com/go-timingwheel/timingwheel/durable"
)

// Store keeps the definitions of one namespace and runs them. It is safe for
// concurrent use; any number of Stores, in any number of processes, may share
// a namespace.
type Store struct {
	defs Definitions
	q    *durable.Queue
	log  *slog.Logger
}

// New returns the Store of the definitions in defs, adding occurrences to q
// (the Queue of the same namespace and store). A nil log is slog.Default().
// It panics on a nil defs or Queue: a mistake in the program.
func New(defs Definitions, q *durable.Queue, log *slog.Logger) *Store {
	if defs == nil || q == nil {
		panic("schedules.New: nil Definitions or Queue")
	}
	if log == nil {
		log = slog.Default()
	}
	return &Store{defs: defs, q: q, log: log}
}

// Put stores d under d.Name, replacing any definition there, and reports
// whether there was none. It returns an error wrapping one of Validate's and
// stores nothing for a bad d. A replaced definition whose content changed
// stops at once: its pending occurrence is cancelled, and the new one starts
// from the first of its times after now (in every process within a poll).
func (s *Store) Put(ctx context.Context, d Definition) (created bool, err error) {
	raw, err := encode(d)
	if err != nil {
		return false, err
	}
	prev, err := s.defs.Swap(ctx, d.Name, raw)
	if err != nil {
		return false, fmt.Errorf("schedules: put %q: %w", d.Name, err)
	}
	if prev != nil {
		if v := version(prev); v != version(raw) {
			s.remove(ctx, periodicName(d.Name, v))
		}
	}
	return prev == nil, nil
}

// Get returns the definition under name, or an error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, name string) (Definition, error) {
	raw, err := s.defs.Get(ctx, name)
	if err != nil {
		return Definition{}, fmt.Errorf("schedules: get %q: %w", name, err)
	}
	if raw == nil {
		return Definition{}, fmt.Errorf("%w: %q", ErrNotFound, name)
	}
	d, err := decode(raw)
	d.Version = version(raw)
	return d, err
}

// List returns every definition, by name. One that this code cannot read
// (written by a newer timerd) is left out and logged.
func (s *Store) List(ctx context.Context) ([]Definition, error) {
	all, err := s.read(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Definition, 0, len(all))
	for _, e := range all {
		out = append(out, e.def)
	}
	return out, nil
}

// Delete removes the definition under name and stops its schedule (its
// pending occurrence is cancelled; one already due may still run), and
// reports whether there was one.
func (s *Store) Delete(ctx context.Context, name string) (bool, error) {
	prev, err := s.defs.Delete(ctx, name)
	if err != nil {
		return false, fmt.Errorf("schedules: delete %q: %w", name, err)
	}
	if prev == nil {
		return false, nil
	}
	s.remove(ctx, periodicName(name, version(prev)))
	return true, nil
}

// entry is one definition as read, with its periodic schedule's name.
type entry struct {
	def      Definition
	periodic string
}

// read returns the readable definitions, by name.
func (s *Store) read(ctx context.Context) ([]entry, error) {
	m, err := s.defs.All(ctx)
	if err != nil {
		return nil, fmt.Errorf("schedules: list: %w", err)
	}
	out := make([]entry, 0, len(m))
	for name, raw := range m {
		d, err := decode(raw)
		if err == nil && d.Name != name {
			err = fmt.Errorf("schedules: stored definition under %q is named %q", name, d.Name)
		}
		if err != nil {
			s.log.Error("schedules: skipping a definition", "name", name, "err", err)
			continue
		}
		d.Version = version(raw)
		out = append(out, entry{def: d, periodic: periodicName(name, d.Version)})
	}
	slices.SortFunc(out, func(a, b entry) int { return cmp.Compare(a.def.Name, b.def.Name) })
	return out, nil
}

// remove stops the periodic schedule periodic. A failure is logged, not
// returned: the definition is already written, and every Run's next poll
// removes it again.
func (s *Store) remove(ctx context.Context, periodic string) {
	if _, err := s.q.RemovePeriodic(ctx, periodic); err != nil {
		s.log.Warn("schedules: removing a stopped schedule", "periodic", periodic, "err", err)
	}
}
