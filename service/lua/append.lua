-- Compare-and-append for one table, atomically (see service/store.py for the argument layout).
-- KEYS: events, snap, done, outbox, due  (one hash tag: one Redis Cluster slot)
-- Returns {1, new_version} | {0, current_version} (conflict) | {2, current_version, {dup ids}}.
local ver = redis.call('XLEN', KEYS[1])
local ncmd = tonumber(ARGV[7])
local i = 8
-- Duplicates first: a redelivered command must be recognised even when the version has moved on.
local dups = {}
for k = 0, ncmd - 1 do
  if redis.call('SISMEMBER', KEYS[3], ARGV[i + k]) == 1 then dups[#dups + 1] = ARGV[i + k] end
end
if #dups > 0 then return {2, ver, dups} end
if ver ~= tonumber(ARGV[1]) then return {0, ver} end
for k = 0, ncmd - 1 do redis.call('SADD', KEYS[3], ARGV[i + k]) end
i = i + ncmd
local nev = tonumber(ARGV[i]); i = i + 1
-- Entry ids are 0-<version>: a reader can ask for "the events after version v" directly.
for k = 0, nev - 1 do
  redis.call('XADD', KEYS[1], '0-' .. (ver + k + 1), 'e', ARGV[i + k])
end
i = i + nev
local nout = tonumber(ARGV[i]); i = i + 1
for k = 0, nout - 1 do
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[6], '*', 'c', ARGV[i + 2 * k], 'm', ARGV[i + 2 * k + 1])
end
if ARGV[3] == '-' then
  redis.call('ZREM', KEYS[5], ARGV[2])
elseif ARGV[3] ~= '' then
  redis.call('ZADD', KEYS[5], ARGV[3], ARGV[2])
end
if ARGV[4] ~= '' then redis.call('HSET', KEYS[2], 'v', ARGV[4], 's', ARGV[5]) end
return {1, ver + nev}
