-- requeue: ARGV key. Moves a dead task back to due now with fresh attempts;
-- its last error stays until it succeeds. Returns {1, now} or {0, now}.
local k = ARGV[1]
local now = now_ms()
if redis.call('ZREM', dead, k) == 0 then
  return {0, now}
end
redis.call('HDEL', ctl, 'a|' .. k)
redis.call('ZADD', due, now, k)
return {1, now}
