-- pgwheel schema, version 4: the count of a namespace's due tasks (scheduled
-- and retrying), kept by triggers, so that Stats does not read the scheduled
-- backlog. Never edit a released migration: add the next file instead.
--
-- Only place due needs a kept count: it holds the backlog, as many tasks as
-- the application schedules. The other places are bounded by the Queue and
-- Stats counts them from the index: lease by the workers' Concurrency, dead
-- by MaxDead, kept by MaxRetained (10,000 each by default).
--
-- A count is the sum of its namespace's rows in two tables. A statement that
-- changes due tasks appends its net change to pgwheel_count_delta (one row
-- per kind it changed, due or retrying): appends lock nothing, so writers
-- never wait on each other for a counter row, as they would on one row per
-- namespace. Once in 32 such statements the writer folds the namespace's
-- deltas into pgwheel_count (one row per kind), under a try-lock that no
-- other writer waits for; Stats adds up the folded rows and the deltas since.
-- A fold deletes the deltas it adds in its transaction, so each delta counts
-- once, in every snapshot.
--
-- Inserts and updates are counted by statement triggers over the statement's
-- transition tables (a batch add or a claim appends one row); deletes by a
-- row trigger whose WHEN skips every row not in place due, so that a settle,
-- which deletes leased tasks one statement each, runs no trigger at all.
-- The kinds: due (place due) and retrying (place due with an attempt counted
-- or a last error: get.go's rule). TRUNCATE bypasses the triggers: delete
-- rows instead.

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

-- pgwheel_count_task appends the changes an INSERT or UPDATE statement on
-- pgwheel_task made to the due and retrying counts, summed per namespace and
-- kind, and once in 32 statements folds the namespaces it changed: the
-- deltas Stats adds up stay about 64 rows a namespace, unless a fold is held
-- back by a transaction that folded and stays open.
CREATE FUNCTION pgwheel_count_task() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
	ns text;
BEGIN
	IF TG_OP = 'INSERT' THEN
		INSERT INTO pgwheel_count_delta (namespace, kind, n)
		SELECT namespace, kind, sum(n) FROM (
			SELECT namespace, 'due' AS kind, 1 AS n FROM new_rows WHERE place = 'due'
			UNION ALL
			SELECT namespace, 'retrying', 1 FROM new_rows
				WHERE place = 'due' AND (attempts > 0 OR last_error <> '')) c
		GROUP BY namespace, kind;
	ELSE
		INSERT INTO pgwheel_count_delta (namespace, kind, n)
		SELECT namespace, kind, sum(n) FROM (
			SELECT namespace, 'due' AS kind, 1 AS n FROM new_rows WHERE place = 'due'
			UNION ALL
			SELECT namespace, 'retrying', 1 FROM new_rows
				WHERE place = 'due' AND (attempts > 0 OR last_error <> '')
			UNION ALL
			SELECT namespace, 'due', -1 FROM old_rows WHERE place = 'due'
			UNION ALL
			SELECT namespace, 'retrying', -1 FROM old_rows
				WHERE place = 'due' AND (attempts > 0 OR last_error <> '')) c
		GROUP BY namespace, kind HAVING sum(n) <> 0;
	END IF;
	IF FOUND AND random() < 1.0 / 32 THEN
		FOR ns IN SELECT DISTINCT namespace FROM new_rows LOOP
			PERFORM pgwheel_count_fold(ns);
		END LOOP;
	END IF;
	RETURN NULL;
END $$;

-- pgwheel_count_deleted counts one deleted due task (its trigger's WHEN
-- skips the others) and folds its namespace once in 32 calls.
CREATE FUNCTION pgwheel_count_deleted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO pgwheel_count_delta (namespace, kind, n) VALUES (OLD.namespace, 'due', -1);
	IF OLD.attempts > 0 OR OLD.last_error <> '' THEN
		INSERT INTO pgwheel_count_delta (namespace, kind, n) VALUES (OLD.namespace, 'retrying', -1);
	END IF;
	IF random() < 1.0 / 32 THEN
		PERFORM pgwheel_count_fold(OLD.namespace);
	END IF;
	RETURN NULL;
END $$;

CREATE TRIGGER pgwheel_count_insert AFTER INSERT ON pgwheel_task
	REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pgwheel_count_task();
CREATE TRIGGER pgwheel_count_update AFTER UPDATE ON pgwheel_task
	REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION pgwheel_count_task();
CREATE TRIGGER pgwheel_count_delete AFTER DELETE ON pgwheel_task
	FOR EACH ROW WHEN (OLD.place = 'due') EXECUTE FUNCTION pgwheel_count_deleted();

-- Stats counted the retrying and the cancelled tasks by these partial
-- indexes (migration 2); it reads the counts now, or the bounded place kept,
-- and nothing else uses them.
DROP INDEX pgwheel_task_retrying;
DROP INDEX pgwheel_result_cancelled;

-- The counts of the tasks stored before this version (the triggers' lock
-- on the table keeps writers out until this commits).
INSERT INTO pgwheel_count (namespace, kind, n)
SELECT namespace, 'due', count(*) FROM pgwheel_task WHERE place = 'due' GROUP BY namespace
UNION ALL
SELECT namespace, 'retrying', count(*) FROM pgwheel_task
	WHERE place = 'due' AND (attempts > 0 OR last_error <> '') GROUP BY namespace;
