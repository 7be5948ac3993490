-- cancel: ARGV key. Returns a cancel.go cancelCode: 0 unknown, 1 scheduled
-- task removed, 2 in flight (marked: its settle drops it whatever the outcome,
-- and it is never retried), 3 dead task removed.
if #ARGV ~= 1 then
  return redis.error_reply('rediswheel: cancel: bad arguments')
end
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
