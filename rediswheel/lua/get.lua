-- get: ARGV one or more task keys. Returns, per key, 11 values:
-- key, where ('due', 'lease', 'dead', 'kept', or '' if absent), its score
-- there ('' if absent), then the ctl fields a|, e|, m|, c|, h|, f|, r| (''
-- for each one missing), then the payload's length in body. get.go decodes it
-- (decodeInfo); what the fields hold is in doc.go's key layout.
--
-- A key is in at most one of the four sets (keys.lua), so the first hit is
-- the task's place.
if #ARGV == 0 then return redis.error_reply('rediswheel: get needs a key') end
local out = {}
for _, k in ipairs(ARGV) do
  local where, score = '', ''
  for _, set in ipairs({{'due', due}, {'lease', lease}, {'dead', dead}, {'kept', kept}}) do
    local s = redis.call('ZSCORE', set[2], k)
    if s then
      where, score = set[1], s
      break
    end
  end
  out[#out + 1] = k
  out[#out + 1] = where
  out[#out + 1] = score
  if where == '' then
    for _ = 1, 8 do out[#out + 1] = '' end
  else
    local f = redis.call('HMGET', ctl, 'a|' .. k, 'e|' .. k, 'm|' .. k, 'c|' .. k, 'h|' .. k, 'f|' .. k, 'r|' .. k)
    for i = 1, 7 do out[#out + 1] = f[i] or '' end
    out[#out + 1] = redis.call('HSTRLEN', body, k)
  end
end
return out
