-- sqlitewheel schema, version 1: pgwheel's (pgwheel/migrations/0001_init.sql)
-- in SQLite. Applied by Migrate (migrate.go) in one transaction with the row
-- of sqlitewheel_schema that records it; never edit a released migration:
-- add the next file instead. Every time is a whole Unix millisecond by the
-- process's clock (INTEGER).

-- One row per namespace that was ever paused: claims skip a paused namespace.
CREATE TABLE sqlitewheel_queue (
	namespace TEXT PRIMARY KEY,
	paused    INTEGER NOT NULL DEFAULT 0
);

-- Fencing tokens: every claim of a task takes a fresh one, so a token names
-- one delivery of one task for ever (never reused, across namespaces and
-- restarts: the counter is committed with the claim that took it).
CREATE TABLE sqlitewheel_token (
	last INTEGER NOT NULL
);
INSERT INTO sqlitewheel_token (last) VALUES (0);

-- The task table. One row per task in any state; place tells which, as the
-- sorted set holding a task does in rediswheel:
--   due    scheduled or retrying; at = due time
--   lease  in flight;             at = lease deadline
--   dead   dead;                  at = when it died
--   kept   finished, retained;    at = when its retention ends (sqlitewheel_result says done or cancelled)
CREATE TABLE sqlitewheel_task (
	namespace        TEXT    NOT NULL,
	key              TEXT    NOT NULL,
	place            TEXT    NOT NULL CHECK (place IN ('due', 'lease', 'dead', 'kept')),
	at               INTEGER NOT NULL,
	payload          BLOB    NOT NULL,          -- x'' once retained
	payload_size     INTEGER NOT NULL,          -- as added
	added            INTEGER NOT NULL,          -- when Add or Replace stored it
	original_due     INTEGER NOT NULL,          -- the due time given by Add, Replace or Reschedule
	-- The task's own policy (durable.Policy); 0 and '' mean the queue's.
	type             TEXT    NOT NULL DEFAULT '',
	timeout_ms       INTEGER NOT NULL DEFAULT 0,
	max_attempts     INTEGER NOT NULL DEFAULT 0,
	backoff_base_ms  INTEGER NOT NULL DEFAULT 0,
	backoff_limit_ms INTEGER NOT NULL DEFAULT 0,
	attempts         INTEGER NOT NULL DEFAULT 0, -- deliveries counted so far
	token            INTEGER,                    -- the current delivery's fencing token; NULL unless in flight
	cancel_requested INTEGER NOT NULL DEFAULT 0, -- Cancel came while in flight
	last_error       TEXT    NOT NULL DEFAULT '',
	postponements    INTEGER NOT NULL DEFAULT 0, -- RetryAfter postponements used
	unconfirmed      INTEGER NOT NULL DEFAULT 0, -- claims in a row no extend or settle confirmed
	-- The current (or last) delivery: its attempt number, start and worker.
	delivery_attempt INTEGER,
	started          INTEGER,
	worker           TEXT,
	PRIMARY KEY (namespace, key)
);

-- Claims (due rows by at), reaps (expired leases), List pages (keyset on
-- at, key), the dead and retention trims (oldest at first), the next due
-- time and Stats' due count all walk this one index.
CREATE INDEX sqlitewheel_task_place_at ON sqlitewheel_task (namespace, place, at, key);

-- The tasks of each namespace and place, kept by the triggers below, so that
-- the dead and retention trims and Stats count without reading the index
-- (Redis's ZCARD): their work stays bounded by the batch, not by MaxDead or
-- MaxRetained.
CREATE TABLE sqlitewheel_count (
	namespace TEXT    NOT NULL,
	place     TEXT    NOT NULL,
	n         INTEGER NOT NULL,
	PRIMARY KEY (namespace, place)
) WITHOUT ROWID;

CREATE TRIGGER sqlitewheel_task_insert AFTER INSERT ON sqlitewheel_task BEGIN
	INSERT INTO sqlitewheel_count (namespace, place, n) VALUES (new.namespace, new.place, 1)
		ON CONFLICT (namespace, place) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER sqlitewheel_task_delete AFTER DELETE ON sqlitewheel_task BEGIN
	UPDATE sqlitewheel_count SET n = n - 1 WHERE namespace = old.namespace AND place = old.place;
END;
CREATE TRIGGER sqlitewheel_task_move AFTER UPDATE OF place ON sqlitewheel_task
WHEN old.place <> new.place BEGIN
	UPDATE sqlitewheel_count SET n = n - 1 WHERE namespace = old.namespace AND place = old.place;
	INSERT INTO sqlitewheel_count (namespace, place, n) VALUES (new.namespace, new.place, 1)
		ON CONFLICT (namespace, place) DO UPDATE SET n = n + 1;
END;

-- The execution log: one row per finished delivery, the newest HistoryLen
-- kept per task. Forgetting a task deletes its log.
CREATE TABLE sqlitewheel_delivery (
	id        INTEGER PRIMARY KEY,
	namespace TEXT    NOT NULL,
	key       TEXT    NOT NULL,
	attempt   INTEGER NOT NULL,
	worker    TEXT    NOT NULL,
	started   INTEGER NOT NULL,
	finished  INTEGER NOT NULL,
	outcome   TEXT    NOT NULL, -- done, retry, dead, release, later, cancelled, lease expired
	error     TEXT    NOT NULL, -- cut at 256 bytes; the full last error is sqlitewheel_task.last_error
	FOREIGN KEY (namespace, key) REFERENCES sqlitewheel_task ON DELETE CASCADE
);
CREATE INDEX sqlitewheel_delivery_task ON sqlitewheel_delivery (namespace, key, id);

-- The result table: how a retained task finished. A row exists exactly
-- while its task is in place 'kept'.
CREATE TABLE sqlitewheel_result (
	namespace TEXT    NOT NULL,
	key       TEXT    NOT NULL,
	state     TEXT    NOT NULL CHECK (state IN ('done', 'cancelled')),
	finished  INTEGER NOT NULL,
	PRIMARY KEY (namespace, key),
	FOREIGN KEY (namespace, key) REFERENCES sqlitewheel_task ON DELETE CASCADE
);

-- The periodic registry: per schedule, the latest occurrence added as a task.
CREATE TABLE sqlitewheel_periodic (
	namespace TEXT    NOT NULL,
	name      TEXT    NOT NULL,
	pointer   INTEGER NOT NULL,
	PRIMARY KEY (namespace, name)
);
