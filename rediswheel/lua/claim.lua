-- claim: ARGV limit, lease ms, max attempts, reap limit, dead cap.
-- Reaps up to "reap limit" expired leases, then leases up to "limit" due tasks
-- with a fresh fencing token. Returns {now, next, then per task: key, payload,
-- attempt, due ms, token}, where next is the earliest due time or lease
-- deadline left in the shard (-1 when it is empty).
local limit, lease_ms = tonumber(ARGV[1]), tonumber(ARGV[2])
local max, reap, cap = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local now = now_ms()

-- A lease that ran out means its worker died or stalled: the task goes back
-- to due at once (or to dead when out of attempts, or away if cancelled). Its
-- token is dropped, so a late ack from that worker is rejected.
for _, k in ipairs(redis.call('ZRANGEBYSCORE', lease, '-inf', now, 'LIMIT', 0, reap)) do
  redis.call('ZREM', lease, k)
  if redis.call('HEXISTS', ctl, 'x|' .. k) == 1 then
    forget(k)
  elseif tonumber(redis.call('HGET', ctl, 'a|' .. k) or '0') >= max then
    bury(k, now, 'lease expired', cap)
  else
    redis.call('HDEL', ctl, 't|' .. k)
    redis.call('HSET', ctl, 'e|' .. k, 'lease expired')
    redis.call('ZADD', due, now, k)
  end
end

-- One command per kind for the whole batch, not one per task: a full batch
-- costs a few microseconds of Redis time per task.
local out = {now, -1}
local ready = redis.call('ZRANGEBYSCORE', due, '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
local n = #ready / 2
if n > 0 then
  local keys, afields, leased = {}, {}, {}
  for i = 1, n do
    local k = ready[2 * i - 1]
    keys[i] = k
    afields[i] = 'a|' .. k
    leased[2 * i - 1] = now + lease_ms
    leased[2 * i] = k
  end
  redis.call('ZREM', due, unpack(keys))
  redis.call('ZADD', lease, unpack(leased))
  local last = redis.call('HINCRBY', ctl, '#token', n)
  local attempts = redis.call('HMGET', ctl, unpack(afields))
  local bodies = redis.call('HMGET', body, unpack(keys))
  local fields = {}
  for i = 1, n do
    local k = keys[i]
    local token = last - n + i
    local attempt = tonumber(attempts[i] or '0') + 1
    fields[#fields + 1] = 't|' .. k
    fields[#fields + 1] = token
    fields[#fields + 1] = afields[i]
    fields[#fields + 1] = attempt
    out[#out + 1] = k
    out[#out + 1] = bodies[i] or ''
    out[#out + 1] = attempt
    out[#out + 1] = ready[2 * i]
    out[#out + 1] = token
  end
  redis.call('HSET', ctl, unpack(fields))
end

local nd = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES')
local nl = redis.call('ZRANGE', lease, 0, 0, 'WITHSCORES')
local nxt = -1
if nd[2] then nxt = tonumber(nd[2]) end
if nl[2] and (nxt < 0 or tonumber(nl[2]) < nxt) then nxt = tonumber(nl[2]) end
out[2] = nxt
return out
