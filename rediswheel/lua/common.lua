-- Helpers, prepended by scripts.go to every script but add (which runs on
-- every Add and needs none of them: defining them costs Redis time per call).

-- All time is Redis time: one clock for every worker, so "due <= now" can
-- never fire a task early, whatever the workers' clocks say.
--
-- now_ms returns Redis time in ms twice: rounded down (now), and rounded up
-- (now_up). "Is it due?" compares with now; a deadline a delay > 0 from now
-- (a retry, a RetryAfter, a lease, a retention) is now_up + delay, never
-- now + delay: TIME has µs, and now + delay would be up to 1 ms before the
-- call's time + delay (TestRelativeDueNeverBeforeTheCall). A delay of 0 is
-- "at once", now: nothing can act on it before the script returns, so it
-- cannot be early, and now_up would make it wait for the next ms. add.lua
-- does the same inline.
local function now_ms()
  local t = redis.call('TIME')
  local us = tonumber(t[2])
  local now = tonumber(t[1]) * 1000 + math.floor(us / 1000)
  if us % 1000 == 0 then return now, now end
  return now, now + 1
end

-- is_int reports whether v is the decimal text of an integer, as the Go side
-- sends every number: each script checks its ARGV with it before it writes
-- anything, because Redis does not undo what a script wrote before it failed.
local function is_int(v)
  return v ~= nil and string.match(v, '^%-?%d+$') ~= nil
end

-- task_fields are the prefixes of every per-task field of ctl (doc.go lists
-- them). A field added there must be added here, or forget leaks it.
local task_fields = {'a|', 't|', 'x|', 'e|', 'm|', 'c|', 'h|', 'f|', 'r|', 'u|'}

-- The counts of the states that share a sorted set, shard fields of ctl that
-- stats.lua reads: #retrying counts the tasks in due that are retrying (an
-- attempt counted, or a last error: get.go's rule), #cancelled the tasks in
-- kept that finished cancelled (f| "cancelled|..."). Each script that moves
-- a task into or out of due or kept, or changes a| or e| of a task in due,
-- keeps them (add.lua inline); a state's other count is its set's ZCARD
-- minus these. A count back at 0 is deleted, so an empty shard leaves no
-- field behind but #token.
local function count(field, n)
  if n ~= 0 and redis.call('HINCRBY', ctl, field, n) == 0 then redis.call('HDEL', ctl, field) end
end

-- retrying reports whether a task in due with attempts a and last error e
-- (HGET's values, false when absent) reads as retrying.
local function retrying(a, e)
  return tonumber(a or '0') > 0 or (e or '') ~= ''
end

-- forget drops a task's payload and control fields; the caller removes it from
-- its sorted set.
local function forget(k)
  redis.call('HDEL', body, k)
  local fields = {}
  for i, f in ipairs(task_fields) do fields[i] = f .. k end
  redis.call('HDEL', ctl, unpack(fields))
end

-- bury moves a task that has left lease into the dead set, then trims the
-- dead set towards cap, a few of the oldest per call so the work stays
-- bounded. It returns how many dead tasks it trimmed, for the metrics.
local function bury(k, now, err, cap)
  redis.call('ZADD', dead, now, k)
  redis.call('HSET', ctl, 'e|' .. k, err)
  redis.call('HDEL', ctl, 't|' .. k)
  local over = redis.call('ZCARD', dead) - cap
  if over <= 0 then return 0 end
  if over > 16 then over = 16 end
  local old = redis.call('ZRANGE', dead, 0, over - 1)
  for _, o in ipairs(old) do
    redis.call('ZREM', dead, o)
    forget(o)
  end
  return #old
end

-- retire finishes a task that has left its sorted set as state ('done' or
-- 'cancelled'). With keep_ms > 0 it is retained: a member of kept until
-- now_up + keep_ms (now_ms: rounded up, so never trimmed before its full
-- retention), with f|k "state|finish ms" (now), and its attempts, last error,
-- record and history left for Get. Its payload shrinks to "" (Get reads the
-- size from m|) but its body field stays, so Add of the key stays a no-op
-- while it is retained (the body invariant, keys.lua). Without retention it
-- is forgotten at once.
--
-- A task done has no last error: it succeeded, and its history keeps each
-- attempt's error (durable.TaskInfo.LastError). A cancelled one keeps it.
local function retire(k, state, now, now_up, keep_ms)
  if keep_ms <= 0 then
    forget(k)
    return
  end
  redis.call('ZADD', kept, now_up + keep_ms, k)
  redis.call('HSET', body, k, '')
  redis.call('HSET', ctl, 'f|' .. k, state .. '|' .. now)
  redis.call('HDEL', ctl, 't|' .. k, 'x|' .. k, 'r|' .. k, 'u|' .. k)
  if state == 'done' then
    redis.call('HDEL', ctl, 'e|' .. k)
  else
    count('#cancelled', 1)
  end
end

-- forget_kept forgets a task the caller removed from kept, uncounting it
-- from #cancelled if it finished cancelled.
local function forget_kept(k)
  local f = redis.call('HGET', ctl, 'f|' .. k)
  if f and string.sub(f, 1, 10) == 'cancelled|' then count('#cancelled', -1) end
  forget(k)
end

-- trim_kept forgets retained tasks whose retention has ended, then the
-- oldest while more than cap are retained: at most limit in all, so the work
-- stays bounded. It returns how many it forgot.
local function trim_kept(now, cap, limit)
  local n = 0
  for _, k in ipairs(redis.call('ZRANGEBYSCORE', kept, '-inf', now, 'LIMIT', 0, limit)) do
    redis.call('ZREM', kept, k)
    forget_kept(k)
    n = n + 1
  end
  local over = math.min(redis.call('ZCARD', kept) - cap, limit - n)
  if over > 0 then
    for _, k in ipairs(redis.call('ZRANGE', kept, 0, over - 1)) do
      redis.call('ZREM', kept, k)
      forget_kept(k)
      n = n + 1
    end
  end
  return n
end

-- remember appends one delivery of k to its history, the ctl field h|k: a
-- JSON array of at most keep entries, oldest first, each
-- [attempt, worker, start ms, end ms, outcome, error] or, for a delivery with
-- a result, [attempt, worker, start ms, end ms, outcome, error, result]. The
-- delivery's attempt, worker and start come from c|k, "attempt|start
-- ms|worker", which claim writes; outcome is a settle outcome name,
-- 'cancelled' or 'lease expired'. Error text is cut at 256 bytes here: the
-- full last error is e|k. result is settle.go's text (encodeResult, bounded
-- there), opaque here; '' for none. waited (ms, nil for none) moves the
-- start that much after the claim, never past finish (durable's
-- Outcome.Waited: a wait for a Flow key is not the handler's time).
local function remember(k, finish, outcome, err, keep, result, waited)
  local c = redis.call('HGET', ctl, 'c|' .. k)
  if not c or keep <= 0 then return end
  local attempt, start, worker = string.match(c, '^(%d+)|(%d+)|(.*)$')
  if not attempt then return end -- not claim's format: no entry rather than a failed settle
  local h = redis.call('HGET', ctl, 'h|' .. k)
  local list = h and cjson.decode(h) or {}
  start = tonumber(start)
  if waited and waited > 0 then start = math.min(start + waited, finish) end
  local e = err or ''
  if #e > 256 then
    -- cut on a character's boundary (the Queue sends valid UTF-8): back
    -- over the continuation bytes (0x80-0xBF) of the character at byte 257
    local i = 257
    while i > 1 and string.byte(e, i) >= 128 and string.byte(e, i) < 192 do i = i - 1 end
    e = string.sub(e, 1, i - 1)
  end
  local entry = {tonumber(attempt), worker, start, finish, outcome, e}
  if result and result ~= '' then entry[7] = result end
  list[#list + 1] = entry
  while #list > keep do table.remove(list, 1) end
  redis.call('HSET', ctl, 'h|' .. k, cjson.encode(list))
end
