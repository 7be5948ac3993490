-- settle: ARGV dead cap, max attempts, then per task: key, token, outcome
-- (done | retry | dead | release | later), retry delay ms, error text. Returns one code
-- per task: 0 rejected (the token is not the current owner's), 1 done,
-- 2 retry scheduled, 3 dead, 4 dropped because it was cancelled, 5 released;
-- then the earliest due time left in the shard (-1 when none), so the worker
-- can wake for a retry it has just scheduled.
local cap, max = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = now_ms()
local n = (#ARGV - 2) / 5
local tfields, xfields = {}, {}
for j = 1, n do
  local k = ARGV[5 * j - 2]
  tfields[j] = 't|' .. k
  xfields[j] = 'x|' .. k
end
local tokens = redis.call('HMGET', ctl, unpack(tfields))
local cancelled = redis.call('HMGET', ctl, unpack(xfields))
local gone, gonefields = {}, {} -- finished tasks, deleted together at the end
local res = {}
for j = 1, n do
  local i = 5 * j - 2
  local k, outcome = ARGV[i], ARGV[i + 2]
  local code = 0
  -- The fencing check: only the holder of the current token may finish a task.
  if tokens[j] == ARGV[i + 1] and redis.call('ZREM', lease, k) == 1 then
    redis.call('HDEL', ctl, 'u|' .. k) -- confirmed: a worker got it (see claim.lua)
    if cancelled[j] or outcome == 'done' then
      gone[#gone + 1] = k
      for _, f in ipairs({'a|', 't|', 'x|', 'e|', 'm|', 'c|', 'h|'}) do gonefields[#gonefields + 1] = f .. k end
      code = cancelled[j] and 4 or 1
    elseif outcome == 'release' then
      redis.call('HDEL', ctl, 't|' .. k)
      redis.call('HINCRBY', ctl, 'a|' .. k, -1)
      redis.call('ZADD', due, now, k)
      code = 5
    elseif outcome == 'dead' or tonumber(redis.call('HGET', ctl, 'a|' .. k) or '0') >= max then
      bury(k, now, ARGV[i + 4], cap)
      code = 3
    else
      redis.call('HDEL', ctl, 't|' .. k)
      redis.call('HSET', ctl, 'e|' .. k, ARGV[i + 4])
      redis.call('ZADD', due, now + tonumber(ARGV[i + 3]), k)
      code = 2
    end
  end
  res[j] = code
end
if #gone > 0 then
  redis.call('HDEL', body, unpack(gone))
  redis.call('HDEL', ctl, unpack(gonefields))
end
local first = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES')
res[n + 1] = first[2] and tonumber(first[2]) or -1
return res
