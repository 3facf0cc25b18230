-- Compare-and-append for one table, atomically (see service/store/event_store.py for the argument layout).
-- KEYS: events, snap, done, outbox, due  (one hash tag: one Redis Cluster slot)
-- Returns {1, new_version} | {0, current_version} (conflict) | {2, current_version, {dup ids}}.
local ver = redis.call('XLEN', KEYS[1])
local ncmd = tonumber(ARGV[7])
local i = 8
-- Duplicates first: a redelivered command must be recognised even when the version has moved on.
-- The ids are added at once (one call each instead of a check and an add); on a duplicate or a
-- conflict the ones this call added are removed again, so nothing is changed.
local dups, added, mine = {}, {}, {}
for k = 0, ncmd - 1 do
  local id = ARGV[i + k]
  if redis.call('SADD', KEYS[3], id) == 1 then
    added[#added + 1] = id
    mine[id] = true
  elseif not mine[id] then
    dups[#dups + 1] = id
  end
end
if #dups > 0 or ver ~= tonumber(ARGV[1]) then
  if #added > 0 then redis.call('SREM', KEYS[3], unpack(added)) end
  if #dups > 0 then return {2, ver, dups} end
  return {0, ver}
end
i = i + ncmd
local nev = tonumber(ARGV[i]); i = i + 1
-- Entry ids are 0-<version>: a reader can ask for "the events after version v" directly.
for k = 0, nev - 1 do
  redis.call('XADD', KEYS[1], '0-' .. (ver + k + 1), 'e', ARGV[i + k])
end
i = i + nev
local nout = tonumber(ARGV[i]); i = i + 1
for k = 0, nout - 1 do
  -- No length cap: an outbox entry leaves only once every platform's group has acknowledged it
  -- (retention, service/store/groups.py); a cap would drop messages a platform has not received yet.
  redis.call('XADD', KEYS[4], '*', 'c', ARGV[i + 2 * k], 'm', ARGV[i + 2 * k + 1])
end
if ARGV[3] == '-' then
  redis.call('ZREM', KEYS[5], ARGV[2])
elseif ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[5], ARGV[3], ARGV[2])
end
if ARGV[6] ~= '0' then
  -- The last append of the aggregate (ARGV[6]: how long its command ids are still needed, s): the
  -- events suffice to load what never changes again, and the ids only recognise late redeliveries.
  redis.call('DEL', KEYS[2])
  redis.call('EXPIRE', KEYS[3], ARGV[6])
elseif ARGV[4] ~= '' then
  redis.call('HSET', KEYS[2], 'v', ARGV[4], 's', ARGV[5])
end
return {1, ver + nev}
