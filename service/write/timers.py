"""Turn timers: due deadlines become ordinary ``tick`` commands.

Each bucket keeps a sorted set of table ids scored by the time (ms) the table next needs attention:
a person's turn running out, or an AI seat's turn not yet taken.  The worker sets it in the same Lua
call as the events.  :func:`fire_due` turns the due ones into ``tick`` commands with the id
``tick:<table>:<version>``, so a tick sent twice (by two timer loops, or by a worker and a timer)
is applied once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from service.domain.commands import TableCommand
from service.store.keys import Keys
from service.store.streams import is_cluster

# A fired deadline is pushed back by this much, so the next loop does not fire it again while the
# worker takes it; the worker then sets the true next deadline.
RETRY_MS = 5_000

# On one Redis, the due tables of every bucket in one call: a pipeline of one ZRANGEBYSCORE per bucket
# (1,024 by default) cost the worker ~6-11 ms of CPU to pack and parse every timer_interval, a stall
# of its loop that every command arriving meanwhile waited out (issue 33).  Returns the bucket's
# index in KEYS and the table id, flat.  (A Redis Cluster keeps the pipeline: one key per slot.)
# KEYS: the buckets' due sets.  ARGV: now (ms), the most per bucket.
_DUE = """
local out = {}
for i, key in ipairs(KEYS) do
  for _, t in ipairs(redis.call('ZRANGEBYSCORE', key, '-inf', ARGV[1], 'LIMIT', 0, ARGV[2])) do
    out[#out + 1] = i - 1
    out[#out + 1] = t
  end
end
return out
"""


async def fire_due(redis: Any, keys: Keys, now_ms: float, limit: int = 100,
                   buckets: Sequence[int] | None = None) -> int:
    """Send a tick for every table whose deadline is due (in ``buckets``, default all); returns how
    many were sent."""
    chosen = range(keys.buckets) if buckets is None else buckets
    if not chosen:
        return 0
    if is_cluster(redis):
        pipe = redis.pipeline(transaction=False)
        for b in chosen:
            pipe.zrangebyscore(keys.due(b), "-inf", now_ms, start=0, num=limit)
        per_bucket = await pipe.execute()
        found = [(b, t) for b, ts in zip(chosen, per_bucket, strict=True) for t in ts]
    else:
        flat = await redis.register_script(_DUE)(keys=[keys.due(b) for b in chosen], args=[now_ms, limit])
        found = [(chosen[int(i)], t) for i, t in zip(flat[::2], flat[1::2], strict=True)]
    due = [(b, t.decode() if isinstance(t, bytes) else t) for b, t in found]
    if not due:
        return 0
    pipe = redis.pipeline(transaction=False)
    for _, table in due:
        pipe.xlen(keys.events(table))
    versions = await pipe.execute()
    pipe = redis.pipeline(transaction=False)
    for (b, table), version in zip(due, versions, strict=True):
        tick = TableCommand(id=f"tick:{table}:{version}", table=table, name="tick",
                            args={"version": int(version)}, at=now_ms / 1000)
        pipe.xadd(keys.commands_for(table), {"c": tick.dumps()})
        pipe.zadd(keys.due(b), {table: now_ms + RETRY_MS}, xx=True)
    await pipe.execute()
    return len(due)
