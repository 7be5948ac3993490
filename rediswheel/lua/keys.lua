-- The keys of one shard, prepended to every script by scripts.go.
--
-- Every script receives the six keys of one shard, all carrying the same hash
-- tag, so it touches one cluster slot; no key name is ever built here. Only
-- add may receive several shards' keys, six by six, on a single server (see
-- add.lua): it rebinds these names to each shard's keys in turn.
local due   = KEYS[1] -- ZSET task key -> due ms (scheduled and waiting retries)
local lease = KEYS[2] -- ZSET task key -> lease deadline ms (in flight)
local dead  = KEYS[3] -- ZSET task key -> ms it died (capped)
local body  = KEYS[4] -- HASH task key -> payload
local ctl   = KEYS[5] -- HASH per-task fields (see doc.go) and shard fields such as #token
local kept  = KEYS[6] -- ZSET task key -> ms its retention ends (finished tasks kept for Get)

-- The body invariant: a task key has a field in body exactly while it is a
-- member of one of due, lease, dead and kept, and of only one. Every script
-- keeps it; add relies on it to test "exists in any state" with one HSETNX.
