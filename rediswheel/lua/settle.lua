-- settle: ARGV dead cap, history length, retention ms, max retained; then per
-- task: key, token, outcome, delay ms, error text, result (settle.go's
-- encodeResult text, '' for none: kept in the history entry, never read
-- here), waited ms (durable's Outcome.Waited: the history entry starts that
-- much after the claim, at most at the settle). The outcomes are durable's OutcomeKind names, each recorded as it
-- says (durable's state table, in its doc.go): the Queue decided it, and
-- nothing here looks at attempts or postponements.
--   done     the handler succeeded: the task is finished
--   retry    it failed: due again after the delay, attempt kept,
--            postponements (r|) started over
--   dead     buried at once
--   release  Run stopped: due again at once, attempt given back
--   later    RetryAfter or a Flow hand-back: due again after the delay,
--            attempt given back, one more postponement (r|)
-- Retry, dead and later store the error text as the last error. The one
-- override: a task Cancel marked (x|) is finished as cancelled, whatever the
-- outcome. Any other outcome, and any malformed argument, is an error reply
-- before anything is written: a typo must never retry a task. A done task's
-- last error is cleared (retire); the counts #retrying and #cancelled follow
-- each move (common.lua).
--
-- Returns one settle code per task (durable's SettleCode: 0 rejected, the
-- token is not the current owner's; 1 done; 2 retry scheduled; 3 dead;
-- 4 finished as cancelled; 5 released; 6 postponed), then the earliest due
-- time left in the shard (-1 when none), so the worker can wake for a retry
-- it has just scheduled, then how many dead tasks and how many retained tasks
-- this call trimmed.
local outcomes = {done = true, retry = true, dead = true, release = true, later = true}
local header, per = 4, 7
if (#ARGV - header) % per ~= 0 then
  return redis.error_reply('rediswheel: settle: bad arguments')
end
for i = 1, header do
  if not is_int(ARGV[i]) or tonumber(ARGV[i]) < 0 then
    return redis.error_reply('rediswheel: settle: bad argument ' .. i)
  end
end
local n = (#ARGV - header) / per
for j = 1, n do
  local i = header + per * (j - 1) + 1
  if not outcomes[ARGV[i + 2]] then
    return redis.error_reply('rediswheel: unknown outcome ' .. ARGV[i + 2])
  end
  if not is_int(ARGV[i + 3]) or tonumber(ARGV[i + 3]) < 0 then
    return redis.error_reply('rediswheel: settle: bad delay ' .. ARGV[i + 3])
  end
  if not is_int(ARGV[i + 6]) or tonumber(ARGV[i + 6]) < 0 then
    return redis.error_reply('rediswheel: settle: bad wait ' .. ARGV[i + 6])
  end
end

local cap, keep = tonumber(ARGV[1]), tonumber(ARGV[2])
local retain, max_retained = tonumber(ARGV[3]), tonumber(ARGV[4])
local now, now_up = now_ms()
local tfields, xfields = {}, {}
for j = 1, n do
  local k = ARGV[header + per * (j - 1) + 1]
  tfields[j] = 't|' .. k
  xfields[j] = 'x|' .. k
end
local tokens = redis.call('HMGET', ctl, unpack(tfields))
local cancelled = redis.call('HMGET', ctl, unpack(xfields))

-- Done tasks without retention are forgotten together at the end: two HDELs
-- per call instead of two per task, as most outcomes are done. Each field
-- named costs Redis time even when absent (a string built here, an argument
-- there: about 0.1 ms per field per batch of 128, measured against the
-- settle before issue 9), so only those a task in flight may have are named:
-- task_fields without f| (a finished task is never in flight) and x| (known
-- from cancelled).
local inflight_fields = {'a|', 't|', 'e|', 'm|', 'c|', 'h|', 'r|', 'u|'}
local gone, gonefields = {}, {}
local trimmed = 0
local retained = 0
local res = {}
for j = 1, n do
  local i = header + per * (j - 1) + 1
  local k, outcome, delay, err, result = ARGV[i], ARGV[i + 2], tonumber(ARGV[i + 3]), ARGV[i + 4], ARGV[i + 5]
  local waited = tonumber(ARGV[i + 6])
  local code = 0
  -- The fencing check: only the holder of the current token may finish a task.
  if tokens[j] == ARGV[i + 1] and redis.call('ZREM', lease, k) == 1 then
    if cancelled[j] then outcome = 'cancelled' end
    if retain > 0 or (outcome ~= 'done' and outcome ~= 'cancelled') then
      remember(k, now, outcome, err, keep, result, waited)
    end
    if outcome ~= 'done' and outcome ~= 'cancelled' then
      redis.call('HDEL', ctl, 'u|' .. k) -- confirmed (see claim.lua); a finished task drops it with the rest
    end
    if outcome == 'done' or outcome == 'cancelled' then
      if retain > 0 then
        retire(k, outcome, now, now_up, retain)
        retained = retained + 1
      else
        gone[#gone + 1] = k
        for _, f in ipairs(inflight_fields) do gonefields[#gonefields + 1] = f .. k end
        if cancelled[j] then gonefields[#gonefields + 1] = 'x|' .. k end
      end
      code = outcome == 'done' and 1 or 4
    elseif outcome == 'release' then
      redis.call('HDEL', ctl, 't|' .. k)
      local a = redis.call('HINCRBY', ctl, 'a|' .. k, -1)
      redis.call('ZADD', due, now, k)
      if retrying(a, redis.call('HGET', ctl, 'e|' .. k)) then count('#retrying', 1) end
      code = 5
    elseif outcome == 'dead' then
      trimmed = trimmed + bury(k, now, err, cap)
      code = 3
    elseif outcome == 'retry' then
      redis.call('HDEL', ctl, 't|' .. k, 'r|' .. k)
      redis.call('HSET', ctl, 'e|' .. k, err)
      redis.call('ZADD', due, delay > 0 and now_up + delay or now, k) -- see now_ms
      count('#retrying', 1) -- its attempt was counted
      code = 2
    else -- later
      redis.call('HINCRBY', ctl, 'r|' .. k, 1)
      local a = redis.call('HINCRBY', ctl, 'a|' .. k, -1)
      redis.call('HDEL', ctl, 't|' .. k)
      -- Why it waits is its last error (RetryAfterError's doc), as a retry's.
      redis.call('HSET', ctl, 'e|' .. k, err)
      redis.call('ZADD', due, delay > 0 and now_up + delay or now, k) -- see now_ms
      if retrying(a, err) then count('#retrying', 1) end
      code = 6
    end
  end
  res[j] = code
end
if #gone > 0 then
  redis.call('HDEL', body, unpack(gone))
  redis.call('HDEL', ctl, unpack(gonefields))
end
-- Trim at least as many retained tasks as this call retained, so kept
-- cannot outgrow its cap, plus a few for the expired ones.
local expired = trim_kept(now, max_retained, 16 + retained)
local first = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES')
res[n + 1] = first[2] and tonumber(first[2]) or -1
res[n + 2] = trimmed
res[n + 3] = expired
return res
