-- reschedule: ARGV key, at ms (Unix ms, an integer). Moves a task waiting in
-- due (scheduled or retrying) to at, without touching its payload, attempts,
-- last error or task record m| (its original due time is Add's or Replace's:
-- durable.Store's Reschedule). Returns 1 moved, 0 absent, dead or retained
-- (nothing changed), 2 in flight (nothing changed). reschedule.go drives it.
local k, at = ARGV[1], ARGV[2]
if #ARGV ~= 2 or not string.match(at, '^%d+$') then
  return redis.error_reply('rediswheel: reschedule wants a key and integer ms, got ' .. tostring(at))
end
if not redis.call('ZSCORE', due, k) then
  if redis.call('ZSCORE', lease, k) then return 2 end
  return 0
end
redis.call('ZADD', due, 'XX', at, k)
return 1
