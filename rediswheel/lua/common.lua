-- Helpers, prepended by scripts.go to every script but add (which runs on
-- every Add and needs none of them: defining them costs Redis time per call).

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
