-- dead: ARGV limit, an integer in 1..2^31-1 (dead.go clamps it: a larger Lua
-- number would reach ZRANGE in exponent notation). Lists up to limit dead
-- tasks, oldest first: per task key, ms it died, last error, attempts,
-- payload.
local limit = tonumber(ARGV[1])
if #ARGV ~= 1 or not is_int(ARGV[1]) or limit < 1 or limit > 2147483647 then
  return redis.error_reply('rediswheel: dead: bad limit')
end
local out = {}
local list = redis.call('ZRANGE', dead, 0, limit - 1, 'WITHSCORES')
for i = 1, #list, 2 do
  local k = list[i]
  out[#out + 1] = k
  out[#out + 1] = list[i + 1]
  out[#out + 1] = redis.call('HGET', ctl, 'e|' .. k) or ''
  out[#out + 1] = tonumber(redis.call('HGET', ctl, 'a|' .. k) or '0')
  out[#out + 1] = redis.call('HGET', body, k) or ''
end
return out
