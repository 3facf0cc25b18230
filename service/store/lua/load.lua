-- Load a table in one round trip: its latest snapshot and the events after it.
-- KEYS: events, snap.  ARGV[1]: the version the caller already holds ('' for none): when it is not
-- older than the snapshot, only the events after it come back.
-- Returns {from_version, snapshot or false, {{id, {'e', event}}, ...}}.
local snap = redis.call('HMGET', KEYS[2], 'v', 's')
local from = 0
if snap[1] then from = tonumber(snap[1]) end
local known = tonumber(ARGV[1])
if known and known >= from then
  return {known, false, redis.call('XRANGE', KEYS[1], '0-' .. (known + 1), '+')}
end
return {from, snap[2], redis.call('XRANGE', KEYS[1], '0-' .. (from + 1), '+')}
