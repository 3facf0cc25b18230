-- Retention of one stream read through consumer groups (see service/store/groups.py).
-- KEYS: the stream.  ARGV: keep entries from this time on (ms; -1: no grace period), step (entries).
-- Removes the entries that EVERY group on the stream has acknowledged: those below the oldest entry
-- some group still needs (its oldest pending entry, else the entry after its last delivered one).
-- A stream without a group keeps everything.  Returns how many entries were removed.
local groups = redis.call('XINFO', 'GROUPS', KEYS[1])
if #groups == 0 then return 0 end
local best_ms, best_seq = nil, nil
local function lower(ms, seq)
  if best_ms == nil or ms < best_ms or (ms == best_ms and seq < best_seq) then
    best_ms, best_seq = ms, seq
  end
end
for _, g in ipairs(groups) do
  local f = {}
  for i = 1, #g, 2 do f[g[i]] = g[i + 1] end
  if tonumber(f['pending']) > 0 then
    local p = redis.call('XPENDING', KEYS[1], f['name'])
    local ms, seq = string.match(p[2], '^(%d+)-(%d+)$')
    lower(tonumber(ms), tonumber(seq))
  else
    local ms, seq = string.match(f['last-delivered-id'], '^(%d+)-(%d+)$')
    lower(tonumber(ms), tonumber(seq) + 1)
  end
end
local keep = tonumber(ARGV[1])
if keep >= 0 then lower(keep, 0) end
local floor = string.format('%d-%d', best_ms, best_seq)
-- Whole stream nodes first, in bounded steps; then the few entries left below the floor in the
-- first node (at most one node's worth: stream-node-max-entries).
local n = redis.call('XTRIM', KEYS[1], 'MINID', '~', floor, 'LIMIT', tonumber(ARGV[2]))
if n < tonumber(ARGV[2]) then
  n = n + redis.call('XTRIM', KEYS[1], 'MINID', '=', floor)
end
return n
