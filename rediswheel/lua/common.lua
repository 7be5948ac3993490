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
  redis.call('HDEL', ctl, 'a|' .. k, 't|' .. k, 'x|' .. k, 'e|' .. k, 'm|' .. k, 'c|' .. k, 'h|' .. k, 'u|' .. k)
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

-- remember appends one delivery of k to its history, the ctl field h|k: a
-- JSON array of at most keep entries, oldest first, each
-- [attempt, worker, start ms, end ms, outcome, error]. The delivery's attempt,
-- worker and start come from c|k, "attempt|start ms|worker", which claim
-- writes; outcome is a settle outcome name or 'lease expired'. Error text is
-- cut at 256 bytes here: the full last error is e|k.
local function remember(k, finish, outcome, err, keep)
  local c = redis.call('HGET', ctl, 'c|' .. k)
  if not c or keep <= 0 then return end
  local attempt, start, worker = string.match(c, '^(%d+)|(%d+)|(.*)$')
  local h = redis.call('HGET', ctl, 'h|' .. k)
  local list = h and cjson.decode(h) or {}
  list[#list + 1] = {tonumber(attempt), worker, tonumber(start), finish, outcome, string.sub(err or '', 1, 256)}
  while #list > keep do table.remove(list, 1) end
  redis.call('HSET', ctl, 'h|' .. k, cjson.encode(list))
end
