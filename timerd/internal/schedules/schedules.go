// Package schedules keeps timerd's periodic schedules: their definitions in
// Redis (one HASH per namespace, name → JSON), and in every timerd process a
// loop that runs rediswheel's Periodic for each definition and stops it when
// the definition goes (RemovePeriodic too), so every scheduled time runs
// once across all processes.
//
// Contract (implemented by the API helper):
//
//	type Definition struct { Name string; Every time.Duration; Cron string; Callback rediswheel.HTTPTask; MaxAttempts int }
//	func New(client redis.UniversalClient, q *rediswheel.Queue, namespace string, log *slog.Logger) *Store
//	func (s *Store) Put(ctx, Definition) (created bool, err error)
//	func (s *Store) Get(ctx, name) (Definition, error)  // ErrNotFound
//	func (s *Store) List(ctx) ([]Definition, error)
//	func (s *Store) Delete(ctx, name) (bool, error)
//	func (s *Store) Run(ctx) error // the loop; returns when ctx ends
package schedules

// PLACEHOLDER (server branch): the minimal compiling form of New and Run
// of the contract above, so internal/server builds before the API helper's
// package is merged. At merge, take the API branch's schedules package and
// drop from here to the end of this file.

import (
	"context"
	"log/slog"

	"github.com/redis/go-redis/v9"

	"github.com/go-timingwheel/timingwheel/rediswheel"
)

type Store struct{}

func New(client redis.UniversalClient, q *rediswheel.Queue, namespace string, log *slog.Logger) *Store {
	return &Store{}
}

func (s *Store) Run(ctx context.Context) error {
	<-ctx.Done()
	return nil
}
