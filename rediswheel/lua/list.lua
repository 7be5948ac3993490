-- list: ARGV state, after score ('' to start at the beginning), after key,
-- limit, scan budget. One shard's part of a List page (list.go merges the
-- shards): the members of the state's sorted set strictly after (after score,
-- after key) in (score, member) order, the order Redis keeps, that are in
-- the state, at most limit of them, examining at most budget members.
-- Returns {stop, frontier score, frontier key, then per match: key, score},
-- where stop is 'end' (examined everything after the cursor), 'full' (limit
-- matches) or 'budget' (examined budget members: the frontier is the last).
--
-- The state names are State's in state.go; the rule telling retrying from
-- scheduled is decodeInfo's in get.go (attempts > 0 or a last error).
local state, after, akey = ARGV[1], ARGV[2], ARGV[3]
-- Integers, as Go sends them (is_int): tonumber would take 1.5 and nan.
local limit, budget = tonumber(ARGV[4]), tonumber(ARGV[5])
if #ARGV ~= 5 or not is_int(ARGV[4]) or limit < 1 or not is_int(ARGV[5]) or budget < limit then
  return redis.error_reply('rediswheel: list wants state, cursor, limit >= 1, budget >= limit')
end
local set, filter = nil, nil
if state == 'scheduled' or state == 'retrying' then set, filter = due, 'ae'
elseif state == 'in flight' then set = lease
elseif state == 'dead' then set = dead
elseif state == 'done' or state == 'cancelled' then set, filter = kept, 'f'
else return redis.error_reply('rediswheel: unknown state ' .. tostring(state)) end
if not filter then budget = limit end

-- a <= b in the byte order Redis sorts equal-score members by (memcmp).
-- Lua's own <= on strings follows the server's locale (strcoll).
local function le(a, b)
  if a == b then return true end
  for i = 1, math.min(#a, #b) do
    local x, y = string.byte(a, i), string.byte(b, i)
    if x ~= y then return x < y end
  end
  return #a < #b
end

-- start: the rank of the first member after the cursor, found in
-- O(log^2 n) without a scan, however many members share its score.
local start = 0
if after ~= '' then
  -- A score as formatScore writes it, digits only: tonumber would take nan.
  local s = string.match(after, '^%-?%d+%.?%d*$') and tonumber(after)
  if not s then return redis.error_reply('rediswheel: list cursor score ' .. after) end
  start = redis.call('ZCOUNT', set, '-inf', '(' .. after)
  local ties = redis.call('ZCOUNT', set, after, after)
  if ties > 0 then
    local own = redis.call('ZSCORE', set, akey)
    if own and tonumber(own) == s then
      start = redis.call('ZRANK', set, akey) + 1
    else -- the cursor's task left or moved: binary search among the ties
      local lo, hi = start, start + ties
      while lo < hi do
        local mid = math.floor((lo + hi) / 2)
        if le(redis.call('ZRANGE', set, mid, mid)[1], akey) then lo = mid + 1 else hi = mid end
      end
      start = lo
    end
  end
end

-- matching tells which members of got (member, score, ...) are in the state.
local function matching(got)
  local n, keep = #got / 2, {}
  if n == 0 then
    return keep
  elseif not filter then
    for i = 1, n do keep[i] = true end
  elseif filter == 'ae' then
    local fields = {}
    for i = 1, n do
      fields[#fields + 1] = 'a|' .. got[2 * i - 1]
      fields[#fields + 1] = 'e|' .. got[2 * i - 1]
    end
    local v = redis.call('HMGET', ctl, unpack(fields))
    for i = 1, n do
      local a, e = tonumber(v[2 * i - 1] or '0'), v[2 * i]
      local retrying = a > 0 or (e ~= false and e ~= '')
      keep[i] = (state == 'retrying') == retrying
    end
  else
    local fields = {}
    for i = 1, n do fields[i] = 'f|' .. got[2 * i - 1] end
    local v = redis.call('HMGET', ctl, unpack(fields))
    for i = 1, n do
      -- A retained task without f| reads as done, as in get.go.
      keep[i] = string.match(v[i] or 'done|', '^([^|]*)') == state
    end
  end
  return keep
end

-- Scan in chunks, so that a page of a common state reads about limit
-- members, and one of a rare state at most budget.
local out = {'end', '', ''}
local matches, scanned = 0, 0
while scanned < budget do
  local want = math.min(budget - scanned, math.max(limit - matches + 4, 16))
  local got = redis.call('ZRANGE', set, start + scanned, start + scanned + want - 1, 'WITHSCORES')
  local n = #got / 2
  local keep = matching(got)
  for i = 1, n do
    if keep[i] then
      out[#out + 1] = got[2 * i - 1]
      out[#out + 1] = got[2 * i]
      matches = matches + 1
      if matches == limit then
        out[1] = 'full'
        return out
      end
    end
  end
  scanned = scanned + n
  if n < want then return out end -- the end of the set
  if scanned == budget then
    out[1], out[2], out[3] = 'budget', got[2 * n], got[2 * n - 1]
  end
end
return out
