-- sqlitewheel schema, version 2: pgwheel's version 2
-- (pgwheel/migrations/0002_results_and_state_counts.sql) in SQLite: each
-- delivery's result in the execution log, and the counts Stats needs per
-- state. Never edit a released migration: add the next file instead.

-- A delivery's result (durable.Result: what the handler produced, such as
-- an HTTP callback's status code and response body), as Settle was given
-- it: code 0 and an empty body for none; the body at most
-- durable.MaxResultBody bytes, truncated (0 or 1) telling that it was cut.
-- Not to be confused with sqlitewheel_result, which says how a retained
-- task finished.
ALTER TABLE sqlitewheel_delivery ADD COLUMN result_code      INTEGER NOT NULL DEFAULT 0;
ALTER TABLE sqlitewheel_delivery ADD COLUMN result_body      BLOB    NOT NULL DEFAULT x'';
ALTER TABLE sqlitewheel_delivery ADD COLUMN result_truncated INTEGER NOT NULL DEFAULT 0;

-- Stats counts per state (durable.StateCounts). Scheduled and retrying share
-- place 'due', done and cancelled place 'kept': sqlitewheel_count gets two
-- more rows per namespace, 'retrying' (tasks in due with an attempt counted
-- or a last error: get.go's rule) and 'cancelled' (tasks whose
-- sqlitewheel_result says cancelled), kept by the triggers below, so that
-- Stats reads a row for each, however many tasks. They are not places: the
-- trims never read them. A task's row may change place, attempts and
-- last_error in one statement; the update triggers compare the whole rule
-- before and after. Deleting a task deletes its result row (ON DELETE
-- CASCADE), which fires the result triggers.
CREATE TRIGGER sqlitewheel_retrying_insert AFTER INSERT ON sqlitewheel_task
WHEN new.place = 'due' AND (new.attempts > 0 OR new.last_error <> '') BEGIN
	INSERT INTO sqlitewheel_count (namespace, place, n) VALUES (new.namespace, 'retrying', 1)
		ON CONFLICT (namespace, place) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER sqlitewheel_retrying_delete AFTER DELETE ON sqlitewheel_task
WHEN old.place = 'due' AND (old.attempts > 0 OR old.last_error <> '') BEGIN
	UPDATE sqlitewheel_count SET n = n - 1 WHERE namespace = old.namespace AND place = 'retrying';
END;
CREATE TRIGGER sqlitewheel_retrying_enter AFTER UPDATE OF place, attempts, last_error ON sqlitewheel_task
WHEN (new.place = 'due' AND (new.attempts > 0 OR new.last_error <> ''))
	AND NOT (old.place = 'due' AND (old.attempts > 0 OR old.last_error <> '')) BEGIN
	INSERT INTO sqlitewheel_count (namespace, place, n) VALUES (new.namespace, 'retrying', 1)
		ON CONFLICT (namespace, place) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER sqlitewheel_retrying_leave AFTER UPDATE OF place, attempts, last_error ON sqlitewheel_task
WHEN (old.place = 'due' AND (old.attempts > 0 OR old.last_error <> ''))
	AND NOT (new.place = 'due' AND (new.attempts > 0 OR new.last_error <> '')) BEGIN
	UPDATE sqlitewheel_count SET n = n - 1 WHERE namespace = old.namespace AND place = 'retrying';
END;

CREATE TRIGGER sqlitewheel_cancelled_insert AFTER INSERT ON sqlitewheel_result
WHEN new.state = 'cancelled' BEGIN
	INSERT INTO sqlitewheel_count (namespace, place, n) VALUES (new.namespace, 'cancelled', 1)
		ON CONFLICT (namespace, place) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER sqlitewheel_cancelled_delete AFTER DELETE ON sqlitewheel_result
WHEN old.state = 'cancelled' BEGIN
	UPDATE sqlitewheel_count SET n = n - 1 WHERE namespace = old.namespace AND place = 'cancelled';
END;
CREATE TRIGGER sqlitewheel_cancelled_enter AFTER UPDATE OF state ON sqlitewheel_result
WHEN new.state = 'cancelled' AND old.state <> 'cancelled' BEGIN
	INSERT INTO sqlitewheel_count (namespace, place, n) VALUES (new.namespace, 'cancelled', 1)
		ON CONFLICT (namespace, place) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER sqlitewheel_cancelled_leave AFTER UPDATE OF state ON sqlitewheel_result
WHEN old.state = 'cancelled' AND new.state <> 'cancelled' BEGIN
	UPDATE sqlitewheel_count SET n = n - 1 WHERE namespace = old.namespace AND place = 'cancelled';
END;

-- The counts of the tasks stored before this version.
INSERT INTO sqlitewheel_count (namespace, place, n)
	SELECT namespace, 'retrying', count(*) FROM sqlitewheel_task
	WHERE place = 'due' AND (attempts > 0 OR last_error <> '') GROUP BY namespace;
INSERT INTO sqlitewheel_count (namespace, place, n)
	SELECT namespace, 'cancelled', count(*) FROM sqlitewheel_result
	WHERE state = 'cancelled' GROUP BY namespace;
