-- Shared prelude, prepended to every script by scripts.go.
--
-- Every script receives the five keys of one shard, all carrying the same hash
-- tag, so it touches one cluster slot; no key name is ever built here.
local due   = KEYS[1] -- ZSET task key -> due ms (scheduled and waiting retries)
local lease = KEYS[2] -- ZSET task key -> lease deadline ms (in flight)
local dead  = KEYS[3] -- ZSET task key -> ms it died (capped)
local body  = KEYS[4] -- HASH task key -> payload
local ctl   = KEYS[5] -- HASH per-task fields a|, t|, x|, e| and the token counter #token

-- All time is Redis time: one clock for every worker, so "due <= now" can
-- never fire a task early, whatever the workers' clocks say.
local function now_ms()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end

-- forget drops a task's payload and control fields; the caller removes it from
-- its sorted set.
local function forget(k)
  redis.call('HDEL', body, k)
  redis.call('HDEL', ctl, 'a|' .. k, 't|' .. k, 'x|' .. k, 'e|' .. k)
end

-- bury moves a task that has left lease into the dead set, then trims the
-- dead set towards cap, a few of the oldest per call so the work stays bounded.
local function bury(k, now, err, cap)
  redis.call('ZADD', dead, now, k)
  redis.call('HSET', ctl, 'e|' .. k, err)
  redis.call('HDEL', ctl, 't|' .. k)
  local over = redis.call('ZCARD', dead) - cap
  if over > 0 then
    if over > 16 then over = 16 end
    for _, old in ipairs(redis.call('ZRANGE', dead, 0, over - 1)) do
      redis.call('ZREM', dead, old)
      forget(old)
    end
  end
end
