package sqlitewheel

import (
	"context"
	"testing"
)

// checkCounts fails t unless sqlitewheel_count holds, for every place of
// st's namespace, the number of its tasks there: the triggers kept it
// through every insert, move and delete (the trims and Stats rely on it).
// It also checks that results exist exactly for retained tasks, and tokens
// exactly for tasks in flight.
func checkCounts(t testing.TB, st *Store) {
	t.Helper()
	ctx := context.Background()
	rows, err := st.r.QueryContext(ctx, `SELECT p.place, coalesce(c.n, 0), (SELECT count(*) FROM sqlitewheel_task t
			WHERE t.namespace = ?1 AND t.place = p.place)
		FROM (SELECT 'due' AS place UNION ALL SELECT 'lease' UNION ALL SELECT 'dead' UNION ALL SELECT 'kept') p
		LEFT JOIN sqlitewheel_count c ON c.namespace = ?1 AND c.place = p.place`, st.namespace)
	if err != nil {
		t.Fatalf("counts: %v", err)
	}
	defer rows.Close()
	for rows.Next() {
		var place string
		var counted, actual int
		if err := rows.Scan(&place, &counted, &actual); err != nil {
			t.Fatal(err)
		}
		if counted != actual {
			t.Errorf("sqlitewheel_count says %d tasks in %s, the table holds %d", counted, place, actual)
		}
	}
	var bad int
	if err := st.r.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM sqlitewheel_task t WHERE t.namespace = ?1 AND (t.place = 'kept') <>
			EXISTS (SELECT 1 FROM sqlitewheel_result r WHERE r.namespace = t.namespace AND r.key = t.key))
		+ (SELECT count(*) FROM sqlitewheel_task WHERE namespace = ?1 AND (place = 'lease') <> (token IS NOT NULL))`,
		st.namespace).Scan(&bad); err != nil {
		t.Fatal(err)
	}
	if bad != 0 {
		t.Errorf("%d tasks with a result row not retained, or a token not in flight (or the reverse)", bad)
	}
}
