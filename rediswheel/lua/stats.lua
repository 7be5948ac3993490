-- stats: no ARGV. Returns {now, due now, scheduled later, in flight, dead,
-- age in ms of the oldest due task (0 if none), retained, paused (1 or 0),
-- retrying, cancelled}: the last two are the counts common.lua's count()
-- keeps (#retrying of due, #cancelled of kept), 0 when never set. stats.go
-- decodes it.
if #ARGV ~= 0 then return redis.error_reply('rediswheel: stats takes no arguments') end
local now = now_ms()
local ready = redis.call('ZCOUNT', due, '-inf', now)
local total = redis.call('ZCARD', due)
local age = 0
local first = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES')
if first[2] and tonumber(first[2]) <= now then age = now - tonumber(first[2]) end
local counts = redis.call('HMGET', ctl, '#retrying', '#cancelled')
return {now, ready, total - ready, redis.call('ZCARD', lease), redis.call('ZCARD', dead), age,
  redis.call('ZCARD', kept), redis.call('HEXISTS', ctl, '#paused'),
  tonumber(counts[1] or '0'), tonumber(counts[2] or '0')}
