-- requeue: ARGV key. Moves a dead task back to due now with fresh attempts
-- (and fresh RetryAfter postponements); its last error and history stay.
-- Returns {1, now} or, when the key is not dead, {0, now}.
if #ARGV ~= 1 then
  return redis.error_reply('rediswheel: requeue: bad arguments')
end
local k = ARGV[1]
local now = now_ms()
if redis.call('ZREM', dead, k) == 0 then
  return {0, now}
end
redis.call('HDEL', ctl, 'a|' .. k, 'r|' .. k)
redis.call('ZADD', due, now, k)
if retrying(false, redis.call('HGET', ctl, 'e|' .. k)) then count('#retrying', 1) end
return {1, now}
