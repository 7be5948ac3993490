-- cancel: ARGV key, retention ms, max retained. Returns {cancel.go's
-- cancelCode, how many retained tasks this call trimmed}. Codes: 0 unknown;
-- 1 scheduled task cancelled; 2 in flight (marked: its settle finishes it as
-- cancelled whatever the outcome, and it is never retried); 3 dead task
-- cancelled; 4 retained task forgotten (it had finished: a later Add of the
-- key is a new task). A cancelled task is retained as 'cancelled' when
-- retention ms > 0, forgotten at once otherwise.
if #ARGV ~= 3 or not is_int(ARGV[2]) or not is_int(ARGV[3]) or tonumber(ARGV[2]) < 0 or tonumber(ARGV[3]) < 0 then
  return redis.error_reply('rediswheel: cancel: bad arguments')
end
local k, retain, max_retained = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local now, now_up = now_ms()
local code = 0
if redis.call('ZREM', due, k) == 1 then
  local f = redis.call('HMGET', ctl, 'a|' .. k, 'e|' .. k)
  if retrying(f[1], f[2]) then count('#retrying', -1) end
  retire(k, 'cancelled', now, now_up, retain)
  code = 1
elseif redis.call('ZSCORE', lease, k) then
  redis.call('HSET', ctl, 'x|' .. k, 1)
  code = 2
elseif redis.call('ZREM', dead, k) == 1 then
  retire(k, 'cancelled', now, now_up, retain)
  code = 3
elseif redis.call('ZREM', kept, k) == 1 then
  forget_kept(k)
  code = 4
end
return {code, trim_kept(now, max_retained, 16 + 1)}
