-- add: ARGV key, mode (nx | replace), at ms, time base (abs | rel), payload.
-- Returns {status, due ms}: 1 stored; 0 the key exists (nx: nothing changed);
-- -1 the key is in flight (never rewritten).
local k, mode = ARGV[1], ARGV[2]
local at = tonumber(ARGV[3])
if ARGV[4] == 'rel' then
  at = now_ms() + at
end
if redis.call('ZSCORE', lease, k) then
  return {-1, at}
end
if mode == 'nx' then
  if redis.call('ZSCORE', due, k) or redis.call('ZSCORE', dead, k) then
    return {0, at}
  end
else
  -- A replaced task starts over: fresh attempts, no last error.
  redis.call('ZREM', dead, k)
  forget(k)
end
redis.call('ZADD', due, at, k)
redis.call('HSET', body, k, ARGV[5])
return {1, at}
