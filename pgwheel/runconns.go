package pgwheel

import (
	"context"
	"fmt"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
)

// runConns are the connections a Run's own operations go through while
// the Run lasts: its claims, settles and heartbeat's extends, at most one
// of each at a time, and the upkeep's vacuum (upkeep.go), so runConnsMax
// connections.
//
// They are a pool of their own beside the application's, opened with its
// configuration (pgxpool.Pool.Config: the same server, credentials and
// hooks) when a Run starts listening (Notify) and closed when it stops.
// On the application's pool alone the Queue's statements wait in line
// behind the application's: an order service at 400 orders/s, 64
// checkouts at once each holding one of pgxpool.New's 4 connections for
// its transaction, ran its timers 6.3–7.3 s late at the median over 20 s
// of it, 3.9–4.0 ms with runConns (TestOrderServiceOnTheDefaultPool, which
// failed without them; its doc has the figures and the command). Outside a Run (before Notify has opened them,
// after it has closed them, for a Store whose Queue never runs) the
// operations use the application's pool.
const runConnsMax = 4

// runPools holds the pools the Store's Runs opened, newest last.
type runPools struct {
	mu    sync.Mutex
	pools []*pgxpool.Pool
}

// runPool is the pool a Run's claims, settles and extends go through: the
// newest Run's own (see runConnsMax), else the application's.
func (s *Store) runPool() *pgxpool.Pool {
	s.runs.mu.Lock()
	defer s.runs.mu.Unlock()
	if n := len(s.runs.pools); n > 0 {
		return s.runs.pools[n-1]
	}
	return s.pool
}

// openRunPool opens a Run's own pool and returns it with the function that
// closes it; if it cannot be opened (the error says why) it returns the
// application's pool, which the Run's operations then use.
func (s *Store) openRunPool(ctx context.Context) (_ *pgxpool.Pool, closePool func(), err error) {
	cfg := s.pool.Config()
	cfg.MaxConns, cfg.MinConns = runConnsMax, 0
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return s.pool, func() {}, fmt.Errorf("pgwheel: the Run's own connections: %w", err)
	}
	s.runs.mu.Lock()
	s.runs.pools = append(s.runs.pools, p)
	s.runs.mu.Unlock()
	return p, func() {
		s.runs.mu.Lock()
		for i, q := range s.runs.pools {
			if q == p {
				s.runs.pools = append(s.runs.pools[:i], s.runs.pools[i+1:]...)
				break
			}
		}
		s.runs.mu.Unlock()
		p.Close() // waits for the statements running on it
	}, nil
}
