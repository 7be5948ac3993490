package sqlitewheel_test

import (
	"context"
	"database/sql"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"time"

	"github.com/go-timingwheel/timingwheel/durable"
	"github.com/go-timingwheel/timingwheel/sqlitewheel"
)

// An order service whose orders live in the tasks' file: checkout stores
// the order and its 30-minute timer in one transaction; payment marks the
// order paid and cancels its timer in another, so the timer never fires for
// a paid order and a failed payment leaves it armed.
func ExampleStore_CancelTx() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "orders")
	defer os.RemoveAll(dir)
	st, err := sqlitewheel.Open(ctx, filepath.Join(dir, "app.db"), sqlitewheel.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	q, _ := durable.New(st, durable.Options{Retention: 24 * time.Hour})
	db := st.DB() // the application's tables and transactions go through the store's writer
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS orders (id TEXT PRIMARY KEY, state TEXT)`); err != nil {
		log.Fatal(err)
	}
	inTx := func(f func(tx *sql.Tx) error) error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := f(tx); err != nil {
			tx.Rollback()
			return err
		}
		return tx.Commit()
	}

	checkout := func(id string) error {
		return inTx(func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `INSERT INTO orders VALUES (?, 'unpaid')`, id); err != nil {
				return err
			}
			_, err := st.AddTx(ctx, tx, sqlitewheel.NewTask{Key: "order:" + id, After: 30 * time.Minute})
			return err
		})
	}
	pay := func(id string) error {
		return inTx(func(tx *sql.Tx) error {
			if _, err := tx.ExecContext(ctx, `UPDATE orders SET state = 'paid' WHERE id = ?`, id); err != nil {
				return err
			}
			// The Queue's Retention and MaxRetained: the cancel retains what q.Cancel would.
			_, err := st.CancelTx(ctx, tx, "order:"+id, q.Options().Retention, q.Options().MaxRetained)
			return err
		})
	}

	if err := checkout("1001"); err != nil {
		log.Fatal(err)
	}
	info, _ := q.Get(ctx, "order:1001")
	fmt.Println("after checkout:", info.State)
	if err := pay("1001"); err != nil {
		log.Fatal(err)
	}
	info, _ = q.Get(ctx, "order:1001")
	var state string
	db.QueryRowContext(ctx, `SELECT state FROM orders WHERE id = '1001'`).Scan(&state)
	fmt.Println("after payment:", state, info.State)
	// Output:
	// after checkout: scheduled
	// after payment: paid cancelled
}
