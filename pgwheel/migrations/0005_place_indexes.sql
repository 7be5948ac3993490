-- pgwheel schema, version 5: one partial index per place instead of
-- pgwheel_task_place_at (namespace, place, at, key). Never edit a released
-- migration: add the next file instead.
--
-- A statement that looks a task up by its key (settle, extend, cancel,
-- reschedule, requeue, get) names no place, or names it as placeOnly
-- (settle.go), so no partial index can serve it: its only plan is the
-- primary key, whatever the statistics say. With the one place index, on
-- statistics that said a namespace was empty (emptied by a burst, then
-- analysed) both indexes cost "one row" and the planner took the place
-- index, the key a condition inside it: each settle walked the namespace's
-- dead entries, 15–21× slower until a vacuum (TestByKeyOnAnEmptiedNamespace,
-- docs/design/pg-churn.md). The statements that walk a place (claims, reaps,
-- trims, List, Dead, Stats) name it as a constant, which a partial index's
-- predicate needs, and each index holds only its place's entries.
CREATE INDEX pgwheel_task_due ON pgwheel_task (namespace, at, key) WHERE place = 'due';
CREATE INDEX pgwheel_task_lease ON pgwheel_task (namespace, at, key) WHERE place = 'lease';
CREATE INDEX pgwheel_task_dead ON pgwheel_task (namespace, at, key) WHERE place = 'dead';
CREATE INDEX pgwheel_task_kept ON pgwheel_task (namespace, at, key) WHERE place = 'kept';
DROP INDEX pgwheel_task_place_at;
