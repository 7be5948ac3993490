-- cancel: ARGV key. Returns 0 unknown, 1 scheduled task removed, 2 in flight
-- (marked: its ack or nack drops it and it is never retried), 3 dead task removed.
local k = ARGV[1]
if redis.call('ZREM', due, k) == 1 then
  forget(k)
  return 1
end
if redis.call('ZSCORE', lease, k) then
  redis.call('HSET', ctl, 'x|' .. k, 1)
  return 2
end
if redis.call('ZREM', dead, k) == 1 then
  forget(k)
  return 3
end
return 0
