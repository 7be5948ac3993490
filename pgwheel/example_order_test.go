package pgwheel_test

import (
	"context"
	"log"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/pgwheel"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// An order service: an unpaid order is cancelled 30 minutes after
// checkout. Checkout stores the order and its timer in one transaction;
// payment marks the order paid and cancels its timer in another, so the
// timer never fires for a paid order and a failed payment leaves it armed.
// (Not run: it needs a PostgreSQL; TestCancelInTransaction runs the same
// calls.)
func ExampleStore_CancelTx() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres://localhost/shop")
	if err != nil {
		log.Fatal(err)
	}
	if err := pgwheel.Migrate(ctx, pool); err != nil { // once, at deploy time
		log.Fatal(err)
	}
	st, _ := pgwheel.New(pool, "orders")
	q, _ := durable.New(st, durable.Options{Retention: 24 * time.Hour})

	checkout := func(ctx context.Context, id string) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `INSERT INTO orders (id, state) VALUES ($1, 'unpaid')`, id); err != nil {
				return err
			}
			_, err := st.AddTx(ctx, tx, pgwheel.NewTask{Key: "order:" + id, After: 30 * time.Minute})
			return err // the order and its timer commit, or roll back, together
		})
	}
	pay := func(ctx context.Context, id string) error {
		return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `UPDATE orders SET state = 'paid' WHERE id = $1`, id); err != nil {
				return err
			}
			// The Queue's Retention and MaxRetained: the cancel retains what q.Cancel would.
			_, err := st.CancelTx(ctx, tx, "order:"+id, q.Options().Retention, q.Options().MaxRetained)
			return err // paid and cancelled together: a rollback leaves the timer armed
		})
	}

	if err := checkout(ctx, "1001"); err != nil {
		log.Fatal(err)
	}
	if err := pay(ctx, "1001"); err != nil {
		log.Fatal(err)
	}
	// In every worker process: only unpaid orders reach the handler.
	q.Run(ctx, func(ctx context.Context, t durable.Task) error { //nolint:errcheck // an example
		_, err := pool.Exec(ctx, `UPDATE orders SET state = 'cancelled' WHERE id = $1 AND state = 'unpaid'`,
			t.Key[len("order:"):])
		return err
	})
}
