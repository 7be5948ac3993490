-- add: ARGV mode (nx | replace), time base (abs | rel), then per task: key,
-- at ms (abs: Unix ms; rel: ms after now), payload. Returns {earliest due ms
-- among the tasks stored, -1 if none; then one status per task: 1 stored,
-- 0 the key exists (nx: nothing changed), -1 the key is in flight (replace:
-- never rewritten)}.
--
-- nx relies on the body invariant (see keys.lua): a key has a payload in
-- body exactly while it is scheduled, retrying, in flight or dead, so one
-- HSETNX both tests "exists in any state" and stores the payload.
local mode, rel = ARGV[1], ARGV[2] == 'rel'
local now = 0
if rel then -- Redis time, as now_ms in common.lua
  local t = redis.call('TIME')
  now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
end
local out, zargs = {-1}, {}
local first = -1
for i = 3, #ARGV, 3 do
  -- An absolute time goes to ZADD as the caller's text: a Lua number would
  -- be formatted back into text for every call.
  local k, at, payload = ARGV[i], ARGV[i + 1], ARGV[i + 2]
  local atn = tonumber(at)
  if rel then
    atn = now + atn
    at = atn
  end
  local status = 1
  if mode == 'nx' then
    if redis.call('HSETNX', body, k, payload) == 0 then
      status = 0
    end
  elseif redis.call('ZSCORE', lease, k) then
    status = -1
  else
    -- A replaced task starts over: fresh attempts, no last error. ZADD
    -- below sets its due time; it must leave dead.
    redis.call('ZREM', dead, k)
    redis.call('ZREM', kept, k) -- a retained task too: its retention ends here
    redis.call('HDEL', ctl, 'a|' .. k, 't|' .. k, 'x|' .. k, 'e|' .. k, 'f|' .. k, 'r|' .. k)
    redis.call('HSET', body, k, payload)
  end
  if status == 1 then
    zargs[#zargs + 1] = at
    zargs[#zargs + 1] = k
    if first < 0 or atn < first then first = atn end
  end
  out[#out + 1] = status
end
if #zargs > 0 then
  redis.call('ZADD', due, unpack(zargs))
end
out[1] = first
return out
