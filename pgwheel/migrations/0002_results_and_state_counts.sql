-- pgwheel schema, version 2: each delivery's result in the execution log,
-- and the partial indexes that let Stats count the states sharing a place.
-- Never edit a released migration: add the next file instead.

-- A delivery's result (durable.Result: what the handler produced, such as
-- an HTTP callback's status code and response body), as Settle was given
-- it: code 0 and an empty body for none; the body at most
-- durable.MaxResultBody bytes, truncated telling that it was cut. Not to be
-- confused with pgwheel_result, which says how a retained task finished.
ALTER TABLE pgwheel_delivery
	ADD COLUMN result_code      integer NOT NULL DEFAULT 0,
	ADD COLUMN result_body      bytea   NOT NULL DEFAULT '',
	ADD COLUMN result_truncated boolean NOT NULL DEFAULT false;

-- Stats counts per state (durable.StateCounts). Scheduled and retrying share
-- place 'due', done and cancelled place 'kept': these indexes hold only the
-- retrying and the cancelled tasks, so counting them reads as many index
-- entries as there are such tasks, not the whole namespace. Their
-- predicates are the ones Stats' queries (stats.go) repeat word for word,
-- and get.go's rule for retrying.
CREATE INDEX pgwheel_task_retrying ON pgwheel_task (namespace)
	WHERE place = 'due' AND (attempts > 0 OR last_error <> '');
CREATE INDEX pgwheel_result_cancelled ON pgwheel_result (namespace)
	WHERE state = 'cancelled';
