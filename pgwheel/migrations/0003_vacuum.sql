-- pgwheel schema, version 3: autovacuum by a fixed number of changed rows
-- rather than a fraction of the table. Never edit a released migration: add
-- the next file instead.
--
-- Every lease, retry and finish leaves a dead row version and dead entries in
-- every index of pgwheel_task (they change place and at, which the index
-- pgwheel_task_place_at holds, so no such UPDATE is HOT). Claims walk the dead
-- entries at the head of the due range until a vacuum removes them. The
-- server's defaults wait for 20% of the table to be dead (200k rows under a
-- backlog of 1M): these make autovacuum take the table at its next round
-- (autovacuum_naptime, 1 min by default) once 1,000 rows died or 10,000 were
-- inserted, whatever the table's size. Vacuuming the few pages that changed is
-- cheap; its index pass reads each index once. The measurement is in
-- docs/design/pg-churn.md (bench/sqlbench's churn command).
--
-- No fillfactor: the updates of the hot path are not HOT whatever room a page
-- has (they change indexed columns), and a lower fillfactor only makes the
-- table larger.
ALTER TABLE pgwheel_task SET (
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_insert_scale_factor = 0,
	autovacuum_vacuum_insert_threshold = 10000,
	autovacuum_analyze_scale_factor = 0,
	autovacuum_analyze_threshold = 10000
);

-- The execution log and the results churn with the tasks (a row per finished
-- delivery, deleted by trims and with its task).
ALTER TABLE pgwheel_delivery SET (
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_insert_scale_factor = 0,
	autovacuum_vacuum_insert_threshold = 10000
);
ALTER TABLE pgwheel_result SET (
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_insert_scale_factor = 0,
	autovacuum_vacuum_insert_threshold = 10000
);
