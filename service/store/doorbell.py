"""The outbox doorbell: on a Redis Cluster, delivery processes wait on one stream instead of polling.

A delivery process reads every bucket's outbox stream (``out:{b}``).  On one Redis one blocking
``XREADGROUP`` covers them all; on a Redis Cluster one read may only name streams of one hash slot,
and polling hundreds of buckets every few milliseconds would cost the cluster more than the game.  So
whoever writes to an outbox on a cluster (the worker after its appends, the gateway's replies) also
*rings*: it adds the bucket numbers to one small stream, ``bell:{bell}`` (trimmed to about
:data:`MAXLEN` entries).  A delivery process blocks on the bell with plain ``XREAD`` and then reads,
without blocking, only the outboxes that were rung.  The bell is only a hint: a ring lost in a crash
(between the append and the ring) costs some latency, never a message, because delivery processes
also sweep every outbox they own every ``sweep_s`` (service.platform.delivery).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from redis.asyncio.cluster import ClusterPipeline

from service.store.decoding import as_text
from service.store.keys import Keys

MAXLEN = 10_000


def ring(pipe: Any, keys: Keys, buckets: Iterable[int]) -> None:
    """Queue one ring for ``buckets`` (their outboxes just got messages) on ``pipe``, if it is a
    Redis Cluster's pipeline: on one Redis the readers block on the outboxes themselves."""
    if not isinstance(pipe, ClusterPipeline):
        return
    rung = sorted(set(buckets))
    if rung:
        pipe.xadd(keys.bell(), {"b": ",".join(map(str, rung))}, maxlen=MAXLEN, approximate=True)


class Doorbell:
    """One process's view of the bell: which buckets were rung since it last looked."""

    def __init__(self, redis: Any, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self.last: str | None = None

    async def start(self) -> None:
        """Listen from now on (what was rung before is covered by the caller's first sweep)."""
        newest = await self.redis.xrevrange(self.keys.bell(), count=1)
        self.last = as_text(newest[0][0]) if newest else "0-0"

    async def wait(self, block_ms: int) -> set[int]:
        """The buckets rung since the last call, waiting up to ``block_ms`` for a ring."""
        if self.last is None:
            await self.start()
        resp = await self.redis.xread({self.keys.bell(): self.last}, count=1000, block=max(block_ms, 1))
        rung: set[int] = set()
        for _, entries in resp or []:
            for mid, fields in entries:
                self.last = as_text(mid)
                raw = as_text(fields.get(b"b") or fields.get("b") or "")
                rung.update(int(b) for b in raw.split(",") if b)
        return rung
