"""Consumer groups on Redis streams: the one layer the worker and the deliveries share.

The worker consumes command streams (group ``workers``), each platform's delivery consumes the outbox
streams (group ``deliver:<platform>``).  Both need the same things, written once here:

- **creation** of the group on many streams, idempotently, from the start of each stream;
- **reading** new entries (``>``) and, after a lost reply or a Redis restart, **re-reading this
  consumer's own pending entries** at once (``XPENDING`` and ``XRANGE``: a re-read is not a
  delivery), instead of waiting for a claim timeout.  redis-py
  retries a command whose connection broke, so a read whose reply was lost leaves entries delivered to
  this consumer that it never received; :meth:`Group.own_pending` finds them (the caller leaves out
  those it holds);
- **claiming** what another consumer held too long (``XAUTOCLAIM``), acknowledging entries deleted
  meanwhile;
- **dead letters**: an entry that cannot be handled is copied, with its error, to a dead-letter
  stream and acknowledged, in one round trip;
- **back-off** after a Redis error (:class:`Pause`) and full-jitter back-off for retries
  (:func:`backoff`);
- **retention** (:meth:`Group.trim`): an entry is removed once every group on its stream has
  acknowledged it (``XTRIM MINID`` below the oldest entry some group still needs: its oldest pending
  entry, else the one after its last delivered), atomically per stream in ``lua/trim.lua``.  A stream
  without any group is never trimmed, and a group that stopped reading (a platform down for hours)
  holds everything after its position: retention never removes what a group has not handled.

Entries are ``(stream, entry id, fields)`` with the stream and id as ``str`` (:mod:`service.store.streams`).
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from importlib import resources
from typing import Any

from redis.exceptions import ResponseError

from service.store.decoding import as_text
from service.store.streams import Entry, StreamReader

# Retention trims in steps of at most this many entries per stream and call (see lua/trim.lua).
TRIM_STEP = 10_000

# On one Redis, a page of this consumer's pending ids of every stream in one call (see own_pending):
# a pipeline of one XPENDING per stream cost a delivery process, which reads 1,024 outbox streams,
# ~8.5 ms of CPU every reread_s (2 s), a stall its deliveries waited out (issue 33).  Returns the
# stream's index in KEYS and the entry id, flat.  KEYS: the streams.  ARGV: the group, the page
# size, the consumer, then each stream's start.
_PENDING = """
local out = {}
for i, key in ipairs(KEYS) do
  for _, p in ipairs(redis.call('XPENDING', key, ARGV[1], ARGV[3 + i], '+', ARGV[2], ARGV[3])) do
    out[#out + 1] = i - 1
    out[#out + 1] = p[1]
  end
end
return out
"""


def backoff(attempt: int, base_s: float, cap_s: float, rng: random.Random) -> float:
    """Exponential backoff with full jitter: uniform in [0, min(cap, base * 2**(attempt-1))]."""
    return rng.uniform(0, min(cap_s, base_s * 2 ** max(attempt - 1, 0)))


class Pause:
    """The wait after a Redis error: doubling from ``first_s`` up to ``cap_s``, reset by :meth:`ok`.

    The cap is short on purpose: it is also how late a process notices that Redis is back after a
    restart or failover (a connection refused costs nothing), and every command held meanwhile waits
    for that (a command's latency across a Redis restart: the chaos run's report, tests/faults/chaos.py)."""

    def __init__(self, first_s: float = 0.05, cap_s: float = 0.5) -> None:
        self.first_s, self.cap_s = first_s, cap_s
        self.next_s = first_s

    def failed(self) -> float:
        """How long to wait now (and double the next wait)."""
        wait, self.next_s = self.next_s, min(self.next_s * 2, self.cap_s)
        return wait

    def ok(self) -> None:
        """Redis answered: the next error waits the shortest time again."""
        self.next_s = self.first_s


class Group:
    """One consumer of one consumer group, over any number of streams (see the module docstring)."""

    def __init__(self, redis: Any, group: str, consumer: str) -> None:
        self.redis = redis
        self.name, self.consumer = group, consumer
        self.reader = StreamReader(redis, group, consumer)
        script = resources.files("service.store.lua").joinpath("trim.lua").read_text()
        self._trim = redis.register_script(script)
        self._pending = redis.register_script(_PENDING)

    async def create(self, streams: Iterable[str]) -> None:
        """Create the group on every stream (and the stream if needed), from its first entry, so that
        nothing written before the first consumer started is missed.  Idempotent."""
        pipe = self.redis.pipeline(transaction=False)
        for s in streams:
            pipe.xgroup_create(s, self.name, id="0", mkstream=True)
        for res in await pipe.execute(raise_on_error=False):
            if isinstance(res, Exception) and "BUSYGROUP" not in str(res):
                raise res

    def queue_read(self, pipe: Any, streams: Iterable[str], count: int, block_ms: int | None = None) -> int:
        """Queue a read of new entries on ``pipe``; returns how many replies it adds (see
        :meth:`service.store.streams.StreamReader.queue`)."""
        return self.reader.queue(pipe, dict.fromkeys(streams, ">"), count, block_ms)

    async def read(self, streams: Iterable[str], count: int, block_ms: int | None = None,
                   pipe: Any = None) -> list[Entry]:
        """New entries of ``streams`` for this consumer, waiting up to ``block_ms`` for some;
        ``pipe`` holds commands to send first in the same round trip."""
        return await self.reader.read(dict.fromkeys(streams, ">"), count, block_ms, pipe=pipe)

    def can_block(self, streams: Iterable[str]) -> bool:
        """Whether one blocking read covers ``streams`` (see :mod:`service.store.streams`)."""
        return self.reader.can_block(dict.fromkeys(streams, ">"))

    async def own_pending(self, streams: Iterable[str], count: int, limit: int = 100_000) -> list[Entry]:
        """Every entry delivered to this consumer and not acknowledged yet, oldest first per stream,
        page by page.  Entries deleted from a stream meanwhile are acknowledged.

        Found with ``XPENDING`` (this consumer's) and read with ``XRANGE``, not ``XREADGROUP … 0``:
        that counts a delivery each time, and a store outage of a few seconds (a failover), re-read
        at every retry, made acknowledged commands look like commands that kill workers (delivered
        more than ``max_attempts`` times) and sent them to the dead letters."""
        starts = dict.fromkeys(streams, "-")
        out: list[Entry] = []
        gone: dict[str, list[str]] = {}
        while starts and len(out) < limit:
            order = list(starts)
            if self.reader.cluster:
                pipe = self.redis.pipeline(transaction=False)
                for stream in order:
                    pipe.xpending_range(stream, self.name, min=starts[stream], max="+", count=count,
                                        consumername=self.consumer)
                pages = {st: [as_text(p["message_id"]) for p in page]
                         for st, page in zip(order, await pipe.execute(), strict=True)}
            else:
                flat = await self._pending(keys=order, args=[self.name, count, self.consumer,
                                                             *(starts[st] for st in order)])
                pages = {st: [] for st in order}
                for i, mid in zip(flat[::2], flat[1::2], strict=True):
                    pages[order[int(i)]].append(as_text(mid))
            wanted = [(st, mid) for st in order for mid in pages[st]]
            if wanted:
                pipe = self.redis.pipeline(transaction=False)
                for stream, mid in wanted:
                    pipe.xrange(stream, min=mid, max=mid, count=1)
                for (stream, mid), rows in zip(wanted, await pipe.execute(), strict=True):
                    if rows:
                        out.append((stream, mid, rows[0][1]))
                    else:
                        gone.setdefault(stream, []).append(mid)
            # A stream whose page was not full has no more pending entries.
            starts = {st: "(" + pages[st][-1] for st in order if len(pages[st]) >= count}
        if gone:
            pipe = self.redis.pipeline(transaction=False)
            for stream, ids in gone.items():
                pipe.xack(stream, self.name, *ids)
            await pipe.execute()
        return out

    async def claim(self, stream: str, idle_ms: int, count: int, limit: int) -> list[Entry]:
        """Take over the entries of ``stream`` pending for at least ``idle_ms`` with any consumer
        (``XAUTOCLAIM``), oldest first, at most about ``limit``; entries deleted meanwhile are
        acknowledged."""
        out: list[Entry] = []
        start = "0-0"
        while True:
            resp = await self.redis.xautoclaim(stream, self.name, self.consumer, idle_ms, start, count=count)
            gone = []
            for mid, fields in resp[1]:
                if fields:
                    out.append((stream, as_text(mid), fields))
                else:
                    gone.append(mid)
            if gone:
                await self.redis.xack(stream, self.name, *gone)
            start = as_text(resp[0])
            if start == "0-0" or len(out) >= limit:
                return out

    async def times_delivered(self, stream: str, entry: str) -> int:
        """How many times an entry was delivered to a consumer of the group."""
        info = await self.redis.xpending_range(stream, self.name, min=entry, max=entry, count=1)
        return int(info[0]["times_delivered"]) if info else 0

    def queue_dead_letter(self, pipe: Any, dead: str, stream: str, entry: str,
                          fields: dict[str, Any]) -> None:
        """Queue on ``pipe``: copy an entry (``fields``: what to keep of it, the error) to the
        dead-letter stream ``dead``, and acknowledge it."""
        pipe.xadd(dead, fields)
        pipe.xack(stream, self.name, entry)

    async def pending(self, streams: Iterable[str]) -> int:
        """How many entries of ``streams`` the group has delivered and not had acknowledged."""
        pipe = self.redis.pipeline(transaction=False)
        for s in streams:
            pipe.xpending(s, self.name)
        total = 0
        for summary in await pipe.execute():
            total += int(summary.get("pending", 0) if isinstance(summary, dict) else summary[0])
        return total

    async def trim(self, streams: Iterable[str], keep_ms: int = 0, now_ms: int = 0) -> int:
        """Retention: remove from each stream the entries every group on it has acknowledged (see the
        module docstring); with ``keep_ms``, also keep every entry younger than that (a debugging grace
        period, by the time in entry ids).  Returns how many entries were removed."""
        floor_ms = max(now_ms - keep_ms, 0) if keep_ms > 0 else -1
        removed = 0
        for s in streams:
            try:
                removed += int(await self._trim(keys=[s], args=[floor_ms, TRIM_STEP]))
            except ResponseError as e:  # the stream went away meanwhile
                if "no such key" not in str(e).lower():
                    raise
        return removed
