-- pgwheel schema, version 1. Applied by Migrate (migrate.go) in one
-- transaction with the row of pgwheel_schema that records it; never edit a
-- released migration: add the next file instead.

-- One row per namespace that was ever paused: claims skip a paused namespace.
CREATE TABLE pgwheel_queue (
	namespace text PRIMARY KEY,
	paused    boolean NOT NULL DEFAULT false
);

-- Fencing tokens: every claim of a task takes a fresh one, so a token names
-- one delivery of one task for ever (never reused, across namespaces too).
CREATE SEQUENCE pgwheel_token AS bigint;

-- The task table. One row per task in any state; place tells which, as the
-- sorted set holding a task does in rediswheel:
--   due    scheduled or retrying; at = due time
--   lease  in flight;             at = lease deadline
--   dead   dead;                  at = when it died
--   kept   finished, retained;    at = when its retention ends (pgwheel_result says done or cancelled)
-- All times are whole milliseconds by the database clock.
CREATE TABLE pgwheel_task (
	namespace        text        NOT NULL,
	key              text        NOT NULL,
	place            text        NOT NULL CHECK (place IN ('due', 'lease', 'dead', 'kept')),
	at               timestamptz NOT NULL,
	payload          bytea       NOT NULL,          -- '' once retained
	payload_size     integer     NOT NULL,          -- as added
	added            timestamptz NOT NULL,          -- when Add or Replace stored it
	original_due     timestamptz NOT NULL,          -- the due time given by Add, Replace or Reschedule
	-- The task's own policy (TaskOptions); 0 and '' mean the queue's.
	type             text        NOT NULL DEFAULT '',
	timeout_ms       bigint      NOT NULL DEFAULT 0,
	max_attempts     integer     NOT NULL DEFAULT 0,
	backoff_base_ms  bigint      NOT NULL DEFAULT 0,
	backoff_limit_ms bigint      NOT NULL DEFAULT 0,
	attempts         integer     NOT NULL DEFAULT 0,     -- deliveries counted so far
	token            bigint,                             -- the current delivery's fencing token; NULL unless in flight
	cancel_requested boolean     NOT NULL DEFAULT false, -- Cancel came while in flight
	last_error       text        NOT NULL DEFAULT '',
	postponements    integer     NOT NULL DEFAULT 0,     -- RetryAfter postponements used
	unconfirmed      integer     NOT NULL DEFAULT 0,     -- claims in a row no extend or settle confirmed
	-- The current (or last) delivery: its attempt number, start and worker.
	delivery_attempt integer,
	started          timestamptz,
	worker           text,
	PRIMARY KEY (namespace, key)
);

-- Claims (due rows by at), reaps (expired leases), List pages (keyset on
-- at, key), the dead and retention trims (oldest at first) and Stats all
-- walk this one index.
CREATE INDEX pgwheel_task_place_at ON pgwheel_task (namespace, place, at, key);

-- The execution log: one row per finished delivery, the newest HistoryLen
-- kept per task. Forgetting a task deletes its log.
CREATE TABLE pgwheel_delivery (
	id        bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	namespace text        NOT NULL,
	key       text        NOT NULL,
	attempt   integer     NOT NULL,
	worker    text        NOT NULL,
	started   timestamptz NOT NULL,
	finished  timestamptz NOT NULL,
	outcome   text        NOT NULL, -- done, retry, dead, release, later, cancelled, lease expired
	error     text        NOT NULL, -- cut at 256 bytes; the full last error is pgwheel_task.last_error
	FOREIGN KEY (namespace, key) REFERENCES pgwheel_task ON DELETE CASCADE
);
CREATE INDEX pgwheel_delivery_task ON pgwheel_delivery (namespace, key, id);

-- The result table: how a retained task finished. A row exists exactly
-- while its task is in place 'kept'.
CREATE TABLE pgwheel_result (
	namespace text        NOT NULL,
	key       text        NOT NULL,
	state     text        NOT NULL CHECK (state IN ('done', 'cancelled')),
	finished  timestamptz NOT NULL,
	PRIMARY KEY (namespace, key),
	FOREIGN KEY (namespace, key) REFERENCES pgwheel_task ON DELETE CASCADE
);

-- The periodic registry: per schedule, the latest occurrence added as a task.
CREATE TABLE pgwheel_periodic (
	namespace text        NOT NULL,
	name      text        NOT NULL,
	pointer   timestamptz NOT NULL,
	PRIMARY KEY (namespace, name)
);

-- pgwheel_clock reads the database clock once: now rounded down to the
-- millisecond ("is it due?" compares with it; it is when a task was added)
-- and now_up rounded up (a deadline a delay > 0 ahead is now_up + delay, so
-- never before the call's time + delay). clock_timestamp, not now(): now()
-- is the transaction's start, and an add made late in a long transaction
-- must count its delay from the call.
CREATE FUNCTION pgwheel_clock(OUT now timestamptz, OUT now_up timestamptz)
LANGUAGE sql VOLATILE AS $$
	SELECT d, CASE WHEN d = t THEN d ELSE d + interval '1 millisecond' END
	FROM (SELECT t, date_trunc('milliseconds', t) AS d FROM (SELECT clock_timestamp() AS t) c) r
$$;
