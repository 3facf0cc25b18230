"""Reading several Redis streams at once, on one Redis or on a Redis Cluster.

On one Redis, one ``XREADGROUP``/``XREAD`` covers any number of streams and can block until one of them
has an entry.  On a Redis Cluster, one command may only name keys of one hash slot, so the streams are
split by slot: one read per slot, sent together in one pipeline (the cluster client sends each node
its share).  A blocking read is kept where it is possible (all the streams in one slot: a worker that
owns one command shard); otherwise the reads are non-blocking and repeated every ``poll_ms`` until
something arrives or ``block_ms`` has passed, which costs a few cheap round trips per second per
process when idle.

Entries are returned as ``(stream, entry id, fields)`` with the stream and id as ``str``.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.crc import key_slot

from service.store.decoding import as_text

Entry = tuple[str, str, Any]
# How often a cluster reader that cannot block looks again (ms).
POLL_MS = 10


def is_cluster(redis: Any) -> bool:
    """Whether ``redis`` is a Redis Cluster client (keys of one command must share a slot)."""
    return isinstance(redis, RedisCluster)


def by_slot(streams: dict[str, str]) -> list[dict[str, str]]:
    """``streams`` (name → position) split into groups whose names share a Cluster hash slot."""
    groups: dict[int, dict[str, str]] = {}
    for name, pos in streams.items():
        groups.setdefault(key_slot(name.encode()), {})[name] = pos
    return list(groups.values())


def parse(replies: list[Any]) -> list[Entry]:
    """Entries from the raw replies of the reads queued by :meth:`StreamReader.queue`."""
    return [(as_text(stream), as_text(mid), fields)
            for reply in replies for stream, entries in reply or [] for mid, fields in entries]


class StreamReader:
    """Reads of several streams through a consumer group (``group`` set) or plain ``XREAD``."""

    def __init__(self, redis: Any, group: str | None = None, consumer: str | None = None,
                 poll_ms: int = POLL_MS) -> None:
        self.redis = redis
        self.group, self.consumer = group, consumer
        self.cluster = is_cluster(redis)
        self.poll_ms = poll_ms

    def _read(self, pipe: Any, streams: dict[str, str], count: int, block: int | None) -> None:
        if self.group is not None:
            pipe.xreadgroup(self.group, self.consumer, streams, count=count, block=block)
        else:
            pipe.xread(streams, count=count, block=block)

    def queue(self, pipe: Any, streams: dict[str, str], count: int, block_ms: int | None = None) -> int:
        """Queue the reads of ``streams`` on ``pipe``; returns how many replies they add (pass those
        last replies to :func:`parse`).  ``block_ms`` is honoured only where one read covers them all."""
        if not streams:
            return 0
        groups = by_slot(streams) if self.cluster else [streams]
        block = block_ms if len(groups) == 1 else None
        for g in groups:
            self._read(pipe, g, count, block)
        return len(groups)

    def can_block(self, streams: dict[str, str]) -> bool:
        """Whether one blocking read covers ``streams``."""
        return not self.cluster or len(by_slot(streams)) <= 1

    async def read(self, streams: dict[str, str], count: int, block_ms: int | None = None,
                   pipe: Any = None) -> list[Entry]:
        """The next entries of ``streams``, waiting up to ``block_ms`` for some (None: no wait).

        ``pipe``, when given, holds commands to send first in the same round trip (acknowledgements).
        """
        if not streams:
            if pipe is not None:
                await pipe.execute()
            if block_ms:
                await asyncio.sleep(block_ms / 1000)
            return []
        if pipe is None:
            pipe = self.redis.pipeline(transaction=False)
        if block_ms is None or self.can_block(streams):
            n = self.queue(pipe, streams, count, block_ms)
            return parse((await pipe.execute())[-n:])
        # A cluster reader over several slots: look, then look again every poll_ms until block_ms.
        deadline = time.monotonic() + block_ms / 1000
        while True:
            n = self.queue(pipe, streams, count)
            out = parse((await pipe.execute())[-n:])
            left = deadline - time.monotonic()
            if out or left <= 0:
                return out
            await asyncio.sleep(min(self.poll_ms / 1000, left))
            pipe = self.redis.pipeline(transaction=False)
