-- extend: ARGV lease ms, then per task: key, token. Pushes each lease the
-- caller still owns to now_up + lease ms (now_ms: rounded up). Returns one
-- code per task (extend.go's extendCode): 0 lost (the token is not current),
-- 1 extended, 2 extended but cancelled.
if not is_int(ARGV[1]) or tonumber(ARGV[1]) <= 0 or #ARGV % 2 ~= 1 then
  return redis.error_reply('rediswheel: extend: bad arguments')
end
local lease_ms = tonumber(ARGV[1])
local now, now_up = now_ms()
local res = {}
for i = 2, #ARGV, 2 do
  local k = ARGV[i]
  local code = 0
  if redis.call('HGET', ctl, 't|' .. k) == ARGV[i + 1] and redis.call('ZSCORE', lease, k) then
    redis.call('ZADD', lease, 'XX', now_up + lease_ms, k)
    redis.call('HDEL', ctl, 'u|' .. k) -- confirmed: a worker holds it (see claim.lua)
    code = 1
    if redis.call('HEXISTS', ctl, 'x|' .. k) == 1 then code = 2 end
  end
  res[#res + 1] = code
end
return res
