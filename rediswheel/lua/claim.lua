-- claim: ARGV limit, lease ms, max attempts, reap limit, dead cap, history
-- length, worker id, unconfirmed bound, retention ms. Driven by claim.go
-- (Queue.claim, claimHeader, claimStride, decodeClaim): if this changes,
-- adjust it. A malformed argument list is an error.
--
-- Reaps up to "reap limit" expired leases, then, unless the shard is paused
-- (ctl field #paused), leases up to "limit" due tasks with a fresh fencing
-- token. Returns {now, next, dead trimmed, paused (0 | 1), then per task: key,
-- payload, attempt, due ms, token, task record (m|, "" if none),
-- postponements (r|)}, where next
-- is the earliest due time (none while paused) or lease deadline left in the
-- shard (-1 when none), and dead trimmed counts the dead tasks bury dropped.
if #ARGV ~= 9 then
  return redis.error_reply('rediswheel: claim: want 9 arguments, got ' .. #ARGV)
end
for _, i in ipairs({1, 2, 3, 4, 5, 6, 8, 9}) do
  if not is_int(ARGV[i]) or tonumber(ARGV[i]) < 0 then
    return redis.error_reply('rediswheel: claim: bad argument ' .. i)
  end
end
local limit, lease_ms = tonumber(ARGV[1]), tonumber(ARGV[2])
local max, reap, cap = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local histlen, worker, bound = tonumber(ARGV[6]), ARGV[7], tonumber(ARGV[8])
local retain = tonumber(ARGV[9])
local now, now_up = now_ms()
local trimmed = 0

-- A lease that ran out means its worker died or stalled, or that the claim's
-- reply never reached it: the task goes back to due at once (or to dead when
-- out of attempts, or finished as cancelled if Cancel marked it: retained
-- for retention ms, as settle would). Its token is dropped, so a late ack
-- from that worker is rejected.
--
-- u|k counts the task's claims since the last one a worker confirmed (by a
-- heartbeat or a settle, which delete it). A lease that expires unconfirmed
-- may have been a lost reply, with no handler run: its attempt is given
-- back, for up to "unconfirmed bound" claims in a row, so that a worker
-- that crashes on every delivery before its first heartbeat still ends the
-- task in dead, after at most bound more deliveries than its max attempts.
for _, k in ipairs(redis.call('ZRANGEBYSCORE', lease, '-inf', now, 'LIMIT', 0, reap)) do
  redis.call('ZREM', lease, k)
  remember(k, now, 'lease expired', '', histlen)
  if redis.call('HEXISTS', ctl, 'x|' .. k) == 1 then
    retire(k, 'cancelled', now, now_up, retain)
  else
    local f = redis.call('HMGET', ctl, 'a|' .. k, 'u|' .. k, 'm|' .. k)
    local attempts, unconfirmed = tonumber(f[1] or '0'), tonumber(f[2] or '0')
    if unconfirmed > 0 and unconfirmed <= bound then
      attempts = attempts - 1
      redis.call('HSET', ctl, 'a|' .. k, attempts)
    end
    -- The task's own max attempts, field 5 of its record (see record.go).
    local own = f[3] and tonumber(string.match(f[3], '^%d+|%d+|%d+|%d+|(%d+)|'))
    if not own or own == 0 then own = max end
    if attempts >= own then
      redis.call('HDEL', ctl, 'u|' .. k) -- a Requeue starts the bound over
      trimmed = trimmed + (bury(k, now, 'lease expired', cap) or 0)
    else
      redis.call('HDEL', ctl, 't|' .. k)
      redis.call('HSET', ctl, 'e|' .. k, 'lease expired')
      redis.call('ZADD', due, now, k)
      count('#retrying', 1)
    end
  end
end

local paused = redis.call('HEXISTS', ctl, '#paused')
local out = {now, -1, 0, paused}

-- One command per kind for the whole batch, not one per task: a full batch
-- costs a few microseconds of Redis time per task.
if paused == 0 then
  local ready = redis.call('ZRANGEBYSCORE', due, '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
  local n = #ready / 2
  if n > 0 then
    local keys, ctlfields, leased = {}, {}, {}
    for i = 1, n do
      local k = ready[2 * i - 1]
      keys[i] = k
      ctlfields[i] = 'a|' .. k
      ctlfields[n + i] = 'u|' .. k
      ctlfields[2 * n + i] = 'm|' .. k
      ctlfields[3 * n + i] = 'e|' .. k -- for #retrying: a task leaving due
      ctlfields[4 * n + i] = 'r|' .. k
      leased[2 * i - 1] = now_up + lease_ms
      leased[2 * i] = k
    end
    redis.call('ZREM', due, unpack(keys))
    redis.call('ZADD', lease, unpack(leased))
    local last = redis.call('HINCRBY', ctl, '#token', n)
    local got = redis.call('HMGET', ctl, unpack(ctlfields))
    local bodies = redis.call('HMGET', body, unpack(keys))
    local fields = {}
    local was_retrying = 0
    for i = 1, n do
      local k = keys[i]
      if retrying(got[i], got[3 * n + i]) then was_retrying = was_retrying + 1 end
      local token = last - n + i
      local attempt = tonumber(got[i] or '0') + 1
      local unconfirmed = tonumber(got[n + i] or '0') + 1
      fields[#fields + 1] = 't|' .. k
      fields[#fields + 1] = token
      fields[#fields + 1] = ctlfields[i]
      fields[#fields + 1] = attempt
      fields[#fields + 1] = ctlfields[n + i]
      fields[#fields + 1] = unconfirmed
      fields[#fields + 1] = 'c|' .. k
      fields[#fields + 1] = attempt .. '|' .. now .. '|' .. worker
      out[#out + 1] = k
      out[#out + 1] = bodies[i] or ''
      out[#out + 1] = attempt
      out[#out + 1] = ready[2 * i]
      out[#out + 1] = token
      out[#out + 1] = got[2 * n + i] or ''
      out[#out + 1] = tonumber(got[4 * n + i] or '0')
    end
    redis.call('HSET', ctl, unpack(fields))
    count('#retrying', -was_retrying)
  end
end

-- While paused, due tasks are not waited for: the worker polls at its idle
-- pace until the shard resumes.
local nxt = -1
if paused == 0 then
  local nd = redis.call('ZRANGE', due, 0, 0, 'WITHSCORES')
  if nd[2] then nxt = tonumber(nd[2]) end
end
local nl = redis.call('ZRANGE', lease, 0, 0, 'WITHSCORES')
if nl[2] and (nxt < 0 or tonumber(nl[2]) < nxt) then nxt = tonumber(nl[2]) end
out[2] = nxt
out[3] = trimmed
return out
