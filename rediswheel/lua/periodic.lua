-- periodic: the registry of periodic schedules of one namespace, driven by
-- periodic.go (if the replies change, adjust periodic.go). KEYS[1] is the
-- registry, {ns.periodic}:sched, a HASH name -> pointer: the Unix ms of the
-- latest occurrence of that schedule added as a task (at registration, the
-- registration time, which no task stands for). It lives in a slot of its
-- own, never with a shard's keys, so the shard locals of keys.lua mean
-- nothing here.
--
-- ARGV op, name, then by op:
--   register            create the entry at now unless it exists
--   read                -
--   advance old new     move the pointer from old to new (new > old)
--   remove              delete the entry
-- Every op returns {status, pointer, now}: status 1 done (register: created;
-- advance: moved), 0 not done (register: it existed; advance: the pointer
-- is no longer old, another replica moved it), -1 the entry does not exist
-- (pointer 0). read and remove answer 0 or -1; remove's pointer is the one
-- it deleted.
local sched = KEYS[1]
local op, name = ARGV[1], ARGV[2]
if not name or name == '' then
  return redis.error_reply('rediswheel: periodic: missing name')
end
local now = now_ms()
local function reply(status, p)
  return {status, tonumber(p or 0), now}
end

if op == 'register' then
  if redis.call('HSETNX', sched, name, now) == 1 then
    return reply(1, now)
  end
  return reply(0, redis.call('HGET', sched, name))
elseif op == 'read' then
  local p = redis.call('HGET', sched, name)
  if not p then return reply(-1) end
  return reply(0, p)
elseif op == 'advance' then
  local old, new = ARGV[3], ARGV[4]
  if not (old and new and string.match(old, '^%d+$') and string.match(new, '^%d+$')) then
    return redis.error_reply('rediswheel: periodic advance: bad pointers')
  end
  -- Never backwards: a pointer that went back would let an occurrence be
  -- added again after it ran.
  if tonumber(new) <= tonumber(old) then
    return redis.error_reply('rediswheel: periodic advance: ' .. new .. ' is not after ' .. old)
  end
  local p = redis.call('HGET', sched, name)
  if not p then return reply(-1) end
  if p ~= old then return reply(0, p) end
  redis.call('HSET', sched, name, new)
  return reply(1, new)
elseif op == 'remove' then
  local p = redis.call('HGET', sched, name)
  if not p then return reply(-1) end
  redis.call('HDEL', sched, name)
  return reply(0, p)
end
return redis.error_reply('rediswheel: periodic: unknown op ' .. tostring(op))
