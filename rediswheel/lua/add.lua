-- add: ARGV mode (nx | replace), time base (abs | rel), then per task: key,
-- at ms (abs: Unix ms; rel: ms after now), payload. Returns {earliest due ms
-- among the tasks stored, -1 if none; then one status per task: 1 stored,
-- 0 the key exists (nx: nothing changed), -1 the key is in flight (replace:
-- never rewritten)}.
--
-- nx relies on the body invariant (see common.lua): a key has a payload in
-- body exactly while it is scheduled, retrying, in flight or dead, so one
-- HSETNX both tests "exists in any state" and stores the payload.
local mode, rel = ARGV[1], ARGV[2] == 'rel'
local now = rel and now_ms() or 0
local out, zargs = {-1}, {}
local first = -1
for i = 3, #ARGV, 3 do
  local k, at, payload = ARGV[i], now + tonumber(ARGV[i + 1]), ARGV[i + 2]
  local status = 1
  if mode == 'nx' then
    if redis.call('HSETNX', body, k, payload) == 0 then
      status = 0
    end
  elseif redis.call('ZSCORE', lease, k) then
    status = -1
  else
    -- A replaced task starts over: fresh attempts, no last error. ZADD
    -- below moves it from due to due; it must leave dead.
    redis.call('ZREM', dead, k)
    redis.call('HDEL', ctl, 'a|' .. k, 't|' .. k, 'x|' .. k, 'e|' .. k)
    redis.call('HSET', body, k, payload)
  end
  if status == 1 then
    zargs[#zargs + 1] = at
    zargs[#zargs + 1] = k
    if first < 0 or at < first then first = at end
  end
  out[#out + 1] = status
end
if #zargs > 0 then
  redis.call('ZADD', due, unpack(zargs))
end
out[1] = first
return out
