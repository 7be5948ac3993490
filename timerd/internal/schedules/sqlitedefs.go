package schedules

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
)

// sqliteTable holds the definitions of every namespace in a SQLite store's
// file, beside sqlitewheel's tables.
const sqliteTable = `CREATE TABLE IF NOT EXISTS timerd_schedule (
	namespace  TEXT NOT NULL,
	name       TEXT NOT NULL,
	definition BLOB NOT NULL,
	PRIMARY KEY (namespace, name)
) WITHOUT ROWID`

// sqliteDefinitions keeps the definitions in timerd_schedule of the
// store's file. A SQLite store serves one process, so a mutex makes each
// Swap and Delete atomic; each statement commits on its own, which never
// has to upgrade a read transaction that another writer of the file (the
// store) may have overtaken.
type sqliteDefinitions struct {
	db *sql.DB
	ns string
	mu sync.Mutex // serializes Swap and Delete
}

// SQLiteDefinitions returns the Definitions of namespace in db, the SQLite
// store's file, creating its table if the file has none (the file is
// timerd's own: nothing else migrates it).
func SQLiteDefinitions(ctx context.Context, db *sql.DB, namespace string) (Definitions, error) {
	if db == nil {
		panic("schedules.SQLiteDefinitions: nil db")
	}
	if _, err := db.ExecContext(ctx, sqliteTable); err != nil {
		return nil, fmt.Errorf("schedules: create timerd_schedule: %w", err)
	}
	return &sqliteDefinitions{db: db, ns: namespace}, nil
}

func (d *sqliteDefinitions) Swap(ctx context.Context, name string, raw []byte) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	old, err := d.Get(ctx, name)
	if err != nil {
		return nil, err
	}
	_, err = d.db.ExecContext(ctx, `INSERT INTO timerd_schedule (namespace, name, definition) VALUES (?, ?, ?)
		ON CONFLICT (namespace, name) DO UPDATE SET definition = excluded.definition`, d.ns, name, raw)
	return old, err
}

func (d *sqliteDefinitions) Get(ctx context.Context, name string) ([]byte, error) {
	var raw []byte
	err := d.db.QueryRowContext(ctx, `SELECT definition FROM timerd_schedule WHERE namespace = ? AND name = ?`, d.ns, name).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	return raw, err
}

func (d *sqliteDefinitions) All(ctx context.Context) (map[string][]byte, error) {
	rows, err := d.db.QueryContext(ctx, `SELECT name, definition FROM timerd_schedule WHERE namespace = ?`, d.ns)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string][]byte{}
	for rows.Next() {
		var name string
		var raw []byte
		if err := rows.Scan(&name, &raw); err != nil {
			return nil, err
		}
		out[name] = raw
	}
	return out, rows.Err()
}

func (d *sqliteDefinitions) Delete(ctx context.Context, name string) ([]byte, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	old, err := d.Get(ctx, name)
	if err != nil || old == nil {
		return nil, err
	}
	_, err = d.db.ExecContext(ctx, `DELETE FROM timerd_schedule WHERE namespace = ? AND name = ?`, d.ns, name)
	return old, err
}
