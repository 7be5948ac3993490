-- settle: ARGV dead cap, max attempts, then per task: key, token, outcome
-- (ok | retry | dead | release), retry delay ms, error text. Returns one code
-- per task: 0 rejected (the token is not the current owner's), 1 done,
-- 2 retry scheduled, 3 dead, 4 dropped because it was cancelled, 5 released.
local cap, max = tonumber(ARGV[1]), tonumber(ARGV[2])
local now = now_ms()
local res = {}
for i = 3, #ARGV, 5 do
  local k, token, outcome = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local code = 0
  -- The fencing check: only the holder of the current token may finish a task.
  if redis.call('HGET', ctl, 't|' .. k) == token and redis.call('ZREM', lease, k) == 1 then
    if redis.call('HEXISTS', ctl, 'x|' .. k) == 1 then
      forget(k)
      code = 4
    elseif outcome == 'ok' then
      forget(k)
      code = 1
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
  res[#res + 1] = code
end
return res
