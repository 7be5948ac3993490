-- add: KEYS the six keys of one shard or more (one group of six per shard,
-- in keys.lua's order); ARGV mode, time base, then per key group: its task
-- count n, then n tasks of key, at ms, payload, policy.
-- Driven by add.go (addMode, timeBase, addStride, runAdds): if this changes,
-- adjust it.
--   mode: nx (store a new key only) | replace (overwrite a key not in flight)
--   base: abs (at is Unix ms) | rel (at is ms after now)
--   policy: the tail of the task record, "<timeout ms>|<max attempts>|
--   <backoff base ms>|<backoff limit ms>|<type>" (see record.go)
-- Any other mode or base, or a malformed argument list, is an error before
-- anything is written.
-- Returns {earliest due ms among the tasks stored, -1 if none; then one status
-- per task, in argument order: 1 stored, 0 the key exists (nx: nothing
-- changed), -1 the key is in flight (replace: never rewritten)}.
--
-- Several shards in one call happen only on a single server (a cluster
-- refuses keys of several slots): a script call costs Redis far more than a
-- task in it, so the group commit of add.go sends all its shards at once.
--
-- Every stored task gets its record m|key, "<added ms>|<original due ms>|
-- <payload bytes>|" .. policy, set per shard by one HSET.
--
-- nx relies on the body invariant (see keys.lua): a key has a payload in
-- body exactly while it is scheduled, retrying, in flight, dead or retained,
-- so one HSETNX both tests "exists in any state" and stores the payload.
local mode, base = ARGV[1], ARGV[2]
if mode ~= 'nx' and mode ~= 'replace' then
  return redis.error_reply('rediswheel: add: unknown mode ' .. tostring(mode))
end
if base ~= 'abs' and base ~= 'rel' then
  return redis.error_reply('rediswheel: add: unknown time base ' .. tostring(base))
end
local groups = #KEYS / 6
if groups < 1 or groups % 1 ~= 0 then
  return redis.error_reply('rediswheel: add: ' .. #KEYS .. ' keys, not 6 per shard')
end
-- Check the whole argument list first: Redis does not undo what a script
-- wrote before it failed.
local i = 3
for _ = 1, groups do
  local n = ARGV[i] and string.match(ARGV[i], '^%d+$') and tonumber(ARGV[i])
  if not n or i + 4 * n > #ARGV then
    return redis.error_reply('rediswheel: add: bad task count at argument ' .. i)
  end
  for j = i + 2, i + 4 * n, 4 do
    -- Whole ms, as Go sends them: tonumber would also take nan and 1e999,
    -- which ZADD refuses only after the payload is stored, and fractions.
    if not string.match(ARGV[j], '^%d+$') then
      return redis.error_reply('rediswheel: add: time ' .. ARGV[j] .. ' is not a number of ms')
    end
    -- The policy's four counts (record.go): a record claim cannot parse
    -- would fail every claim of the shard.
    if not string.match(ARGV[j + 2], '^%d+|%d+|%d+|%d+|') then
      return redis.error_reply('rediswheel: add: bad policy ' .. ARGV[j + 2])
    end
  end
  i = i + 1 + 4 * n
end
if i ~= #ARGV + 1 then
  return redis.error_reply('rediswheel: add: ' .. (#ARGV - i + 1) .. ' arguments past the last task')
end

local rel = base == 'rel'
-- Redis time, as now_ms in common.lua (not prepended to add: see scripts.go):
-- now rounded down is when the task was added, now_up rounded up is what a
-- relative due time > 0 counts from, so that it is never before the call's
-- time + the delay; a relative 0 is now, at once.
local t = redis.call('TIME')
local us = tonumber(t[2])
local now = tonumber(t[1]) * 1000 + math.floor(us / 1000)
local now_up = now
if us % 1000 ~= 0 then now_up = now + 1 end
local added = now .. '|' -- the record's first field, formatted once per call
local out = {-1}
local first = -1
i = 3
for g = 0, groups - 1 do
  -- keys.lua's names, rebound to this group's shard.
  due, lease, dead = KEYS[6 * g + 1], KEYS[6 * g + 2], KEYS[6 * g + 3]
  body, ctl, kept = KEYS[6 * g + 4], KEYS[6 * g + 5], KEYS[6 * g + 6]
  local n = tonumber(ARGV[i])
  local zargs, records = {}, {}
  for j = i + 1, i + 4 * n, 4 do
    -- An absolute time goes to ZADD and into the record as the caller's
    -- text: a Lua number would be formatted back into text for every call.
    local k, at, payload = ARGV[j], ARGV[j + 1], ARGV[j + 2]
    local atn = tonumber(at)
    if rel then
      atn = atn > 0 and now_up + atn or now
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
      -- A replaced task starts over: fresh attempts, no last error, no
      -- history, no unconfirmed claims. ZADD below sets its due time; it
      -- must leave dead and kept. It leaves the counts of common.lua's
      -- count() (inline here): scheduled is neither retrying nor cancelled.
      local f = redis.call('HMGET', ctl, 'a|' .. k, 'e|' .. k, 'f|' .. k)
      if redis.call('ZREM', kept, k) == 1 then -- a retained task too: its retention ends here
        if f[3] and string.sub(f[3], 1, 10) == 'cancelled|' and redis.call('HINCRBY', ctl, '#cancelled', -1) == 0 then
          redis.call('HDEL', ctl, '#cancelled')
        end
      elseif redis.call('ZREM', dead, k) == 0 and (tonumber(f[1] or '0') > 0 or (f[2] or '') ~= '') then
        if redis.call('HINCRBY', ctl, '#retrying', -1) == 0 then -- it was retrying in due
          redis.call('HDEL', ctl, '#retrying')
        end
      end
      redis.call('HDEL', ctl, 'a|' .. k, 't|' .. k, 'x|' .. k, 'e|' .. k,
        'c|' .. k, 'h|' .. k, 'u|' .. k, 'r|' .. k, 'f|' .. k)
      redis.call('HSET', body, k, payload)
    end
    if status == 1 then
      zargs[#zargs + 1] = at
      zargs[#zargs + 1] = k
      records[#records + 1] = 'm|' .. k
      records[#records + 1] = added .. at .. '|' .. #payload .. '|' .. ARGV[j + 3]
      if first < 0 or atn < first then first = atn end
    end
    out[#out + 1] = status
  end
  if #zargs > 0 then
    redis.call('ZADD', due, unpack(zargs))
    redis.call('HSET', ctl, unpack(records))
  end
  i = i + 1 + 4 * n
end
out[1] = first
return out
