-- pause: ARGV pause | resume. Sets or deletes the shard field #paused, which
-- claim.lua honours: while it exists, claims still reap expired leases but
-- lease nothing. Returns 1. pause.go drives it.
local op = ARGV[1]
if #ARGV ~= 1 or (op ~= 'pause' and op ~= 'resume') then
  return redis.error_reply('rediswheel: unknown pause operation ' .. tostring(op))
end
if op == 'pause' then
  redis.call('HSET', ctl, '#paused', 1)
else
  redis.call('HDEL', ctl, '#paused')
end
return 1
