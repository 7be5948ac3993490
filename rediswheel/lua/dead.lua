-- dead: ARGV limit. Lists up to limit dead tasks, oldest first: per task key,
-- ms it died, last error, attempts, payload.
local out = {}
local list = redis.call('ZRANGE', dead, 0, tonumber(ARGV[1]) - 1, 'WITHSCORES')
for i = 1, #list, 2 do
  local k = list[i]
  out[#out + 1] = k
  out[#out + 1] = list[i + 1]
  out[#out + 1] = redis.call('HGET', ctl, 'e|' .. k) or ''
  out[#out + 1] = tonumber(redis.call('HGET', ctl, 'a|' .. k) or '0')
  out[#out + 1] = redis.call('HGET', body, k) or ''
end
return out
