"""Rebuild the derived indexes (room -> table, player -> tables, stats) from the event streams.

The streams are the source of truth; these indexes are written after each append and can be lost
(a crash between the append and the index write, a flushed key).  ``cinq reindex`` folds every
table's events through the same projection the worker applies live (:mod:`service.write.projection`) and
writes the indexes again.
"""

from __future__ import annotations

from typing import Any

from service.store.decoding import as_text
from service.store.keys import Keys
from service.store.repository import fold
from service.write.projection import Rebuild, index_ops


async def reindex(redis: Any, keys: Keys) -> int:
    """Rewrite every derived index from the streams; returns the number of tables seen."""
    rebuild = Rebuild()
    n = 0
    async for raw_key in redis.scan_iter(match=keys.table_keys("events"), count=1000):
        key = as_text(raw_key)
        table_id = key.rsplit(":", 2)[-2]
        raws = [f[b"e"].decode() for _, f in await redis.xrange(key)]
        t = fold(table_id, None, raws, observe=lambda t, ev, at: rebuild.add(index_ops(t, ev), at))
        n += t is not None
    pipe = redis.pipeline(transaction=False)
    rebuild.queue(pipe, keys)
    await pipe.execute()
    return n
