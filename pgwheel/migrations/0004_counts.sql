-- pgwheel schema, version 4: the counts Stats reads, kept by triggers, so
-- that Stats reads a few rows per namespace rather than the namespace's part
-- of the index. Never edit a released migration: add the next file instead.
--
-- A count is the sum of its namespace's rows in two tables. Each statement
-- that changes tasks appends its changes to pgwheel_count_delta (one row per
-- kind it changed, by statement-level triggers over the statement's
-- transition tables): appends lock nothing, so writers never wait on each
-- other for a counter row, as they would on one row per namespace. Now and
-- then a writing transaction folds the namespace's deltas into
-- pgwheel_count (one row per kind), under a try-lock that no other writer
-- waits for; the deltas Stats adds up are those since the last fold. A fold
-- deletes the deltas it adds in its transaction, so each delta counts once,
-- in every snapshot.
--
-- The kinds: the places due, lease, dead and kept (pgwheel_task.place), and
-- retrying (in place due with an attempt counted or a last error: get.go's
-- rule) and cancelled (pgwheel_result.state), which split place due into
-- scheduled and retrying, and kept into done and cancelled.
-- TRUNCATE bypasses the triggers: delete rows instead.

CREATE TABLE pgwheel_count (
	namespace text   NOT NULL,
	kind      text   NOT NULL,
	n         bigint NOT NULL,
	PRIMARY KEY (namespace, kind)
);

CREATE TABLE pgwheel_count_delta (
	namespace text   NOT NULL,
	kind      text   NOT NULL,
	n         bigint NOT NULL
);
CREATE INDEX pgwheel_count_delta_namespace ON pgwheel_count_delta (namespace);

ALTER TABLE pgwheel_count_delta SET (
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_insert_scale_factor = 0,
	autovacuum_vacuum_insert_threshold = 1000
);

-- pgwheel_count_fold folds namespace ns's deltas into pgwheel_count, unless
-- another transaction is folding ns (then it returns at once: that one or a
-- later one folds) or the transaction is not READ COMMITTED: at REPEATABLE
-- READ a fold that committed after the snapshot would make this one's
-- DELETE fail the caller's transaction with a serialization error.
CREATE FUNCTION pgwheel_count_fold(ns text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	IF current_setting('transaction_isolation') <> 'read committed'
		OR NOT pg_try_advisory_xact_lock(1885960038, hashtext(ns)) THEN
		RETURN;
	END IF;
	WITH d AS (DELETE FROM pgwheel_count_delta WHERE namespace = ns RETURNING kind, n)
	INSERT INTO pgwheel_count AS c (namespace, kind, n)
	SELECT ns, kind, sum(n) FROM d GROUP BY kind ORDER BY kind
	ON CONFLICT (namespace, kind) DO UPDATE SET n = c.n + EXCLUDED.n;
END $$;

-- pgwheel_count_task appends the changes of one statement on pgwheel_task,
-- summed per namespace and kind, and once in 32 statements folds each
-- namespace the statement changed: the deltas Stats adds up stay about 64
-- rows a namespace (two kinds a statement), unless a fold is held back by a
-- transaction that folded and stays open.
CREATE FUNCTION pgwheel_count_task() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	ns text;
BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO pgwheel_count_delta (namespace, kind, n)
		SELECT namespace, kind, sum(n) FROM (
			SELECT namespace, place AS kind, 1 AS n FROM new_rows
			UNION ALL
			SELECT namespace, 'retrying', 1 FROM new_rows
				WHERE place = 'due' AND (attempts > 0 OR last_error <> '')) c
		GROUP BY namespace, kind;
	ELSIF TG_OP = 'UPDATE' THEN
		INSERT INTO pgwheel_count_delta (namespace, kind, n)
		SELECT namespace, kind, sum(n) FROM (
			SELECT namespace, place AS kind, 1 AS n FROM new_rows
			UNION ALL
			SELECT namespace, 'retrying', 1 FROM new_rows
				WHERE place = 'due' AND (attempts > 0 OR last_error <> '')
			UNION ALL
			SELECT namespace, place, -1 FROM old_rows
			UNION ALL
			SELECT namespace, 'retrying', -1 FROM old_rows
				WHERE place = 'due' AND (attempts > 0 OR last_error <> '')) c
		GROUP BY namespace, kind HAVING sum(n) <> 0;
	ELSE
		INSERT INTO pgwheel_count_delta (namespace, kind, n)
		SELECT namespace, kind, -sum(n) FROM (
			SELECT namespace, place AS kind, 1 AS n FROM old_rows
			UNION ALL
			SELECT namespace, 'retrying', 1 FROM old_rows
				WHERE place = 'due' AND (attempts > 0 OR last_error <> '')) c
		GROUP BY namespace, kind;
	END IF;
	IF random() < 1.0 / 32 THEN
		IF TG_OP = 'INSERT' THEN
			FOR ns IN SELECT DISTINCT namespace FROM new_rows LOOP
				PERFORM pgwheel_count_fold(ns);
			END LOOP;
		ELSE
			FOR ns IN SELECT DISTINCT namespace FROM old_rows LOOP
				PERFORM pgwheel_count_fold(ns);
			END LOOP;
		END IF;
	END IF;
	RETURN NULL;
END $$;

-- pgwheel_count_result appends a change to the count of cancelled tasks,
-- for one row of pgwheel_result (pgwheel_count_task's folds fold it). Row
-- triggers whose WHEN is false for every other row: most results are done
-- ones, and a task deleted without any (most are) deletes none, while a
-- statement trigger would run for each task deleted, once per cascade.
CREATE FUNCTION pgwheel_count_result() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP IN ('UPDATE', 'DELETE') AND OLD.state = 'cancelled' THEN
		INSERT INTO pgwheel_count_delta (namespace, kind, n) VALUES (OLD.namespace, 'cancelled', -1);
	END IF;
	IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.state = 'cancelled' THEN
		INSERT INTO pgwheel_count_delta (namespace, kind, n) VALUES (NEW.namespace, 'cancelled', 1);
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER pgwheel_count_insert AFTER INSERT ON pgwheel_task
	REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pgwheel_count_task();
CREATE TRIGGER pgwheel_count_update AFTER UPDATE ON pgwheel_task
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pgwheel_count_task();
CREATE TRIGGER pgwheel_count_delete AFTER DELETE ON pgwheel_task
	REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION pgwheel_count_task();
CREATE TRIGGER pgwheel_count_insert AFTER INSERT ON pgwheel_result
	FOR EACH ROW WHEN (NEW.state = 'cancelled') EXECUTE FUNCTION pgwheel_count_result();
CREATE TRIGGER pgwheel_count_update AFTER UPDATE OF state ON pgwheel_result
	FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION pgwheel_count_result();
CREATE TRIGGER pgwheel_count_delete AFTER DELETE ON pgwheel_result
	FOR EACH ROW WHEN (OLD.state = 'cancelled') EXECUTE FUNCTION pgwheel_count_result();

-- Stats counted the retrying and the cancelled tasks by these partial
-- indexes (migration 2); it reads the counts now, and nothing else uses them.
DROP INDEX pgwheel_task_retrying;
DROP INDEX pgwheel_result_cancelled;

-- The counts of the tasks stored before this version (the triggers' lock
-- on the tables keeps writers out until this commits).
INSERT INTO pgwheel_count (namespace, kind, n)
SELECT namespace, place, count(*) FROM pgwheel_task GROUP BY namespace, place
UNION ALL
SELECT namespace, 'retrying', count(*) FROM pgwheel_task
	WHERE place = 'due' AND (attempts > 0 OR last_error <> '') GROUP BY namespace
UNION ALL
SELECT namespace, 'cancelled', count(*) FROM pgwheel_result WHERE state = 'cancelled' GROUP BY namespace;
