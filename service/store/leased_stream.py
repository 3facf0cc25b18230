"""One stream read by one process of all at a time: the ratings projector's queue, the tournaments'
command stream.

The readers read through a consumer group while they hold a single-holder lease
(:func:`service.store.leases.hold`), so entries are handled in stream order; a reader that takes the
lease over first takes over (XAUTOCLAIM) what a dead one read and never acknowledged, then its own
pending entries, then new ones.  An entry handled is acknowledged and deleted.  What an entry means
is the caller's: it passes ``handle``, which acknowledges each entry with :meth:`LeasedStream.ack`;
with ``replicas`` (:mod:`service.store.replicas`) an entry is acknowledged only once what handling it
wrote is on the replicas a failover could promote.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from redis.exceptions import RedisError, ResponseError

from service.store import leases

Entry = tuple[Any, dict[Any, Any]]
"""A stream entry as redis-py gives it: its id and its fields."""
Handle = Callable[[list[Entry]], Awaitable[int]]


@dataclass(frozen=True)
class LeasedStream:
    """``stream`` read by consumer ``name`` of ``group`` while it holds ``lease``, ``count`` entries
    at a time."""

    redis: Any
    stream: str
    group: str
    lease: str
    name: str
    # Told of a Redis error (the reader waits a second and goes on): the caller's log line.
    on_error: Callable[[BaseException], None]
    count: int
    lease_ms: int = 10_000
    claim_idle_ms: int = 30_000
    replicas: Any = None

    async def setup(self) -> None:
        """Create the consumer group (idempotent)."""
        with contextlib.suppress(ResponseError):  # BUSYGROUP: it exists
            await self.redis.xgroup_create(self.stream, self.group, id="0", mkstream=True)

    async def read(self, start: str, block: int | None) -> list[Entry]:
        """This consumer's entries from ``start`` (``0``: its pending ones; ``>``: new ones)."""
        got = await self.redis.xreadgroup(self.group, self.name, {self.stream: start}, count=self.count,
                                          block=block)
        return [e for _, entries in (got or []) for e in entries if e[1]]

    async def ack(self, mid: Any) -> None:
        """Acknowledge and delete one entry handled (once the replicas have what handling it wrote)."""
        if self.replicas is not None:
            await self.replicas.confirm()
        pipe = self.redis.pipeline(transaction=False)
        pipe.xack(self.stream, self.group, mid)
        pipe.xdel(self.stream, mid)
        await pipe.execute()

    async def drain(self, handle: Handle) -> int:
        """Handle everything waiting (this consumer's pending entries first); returns how many."""
        await self.setup()
        n = await handle(await self.read("0", None))
        while got := await self.read(">", None):
            n += await handle(got)
        return n

    async def run(self, handle: Handle, stop: asyncio.Event, block_ms: int = 1000) -> None:
        """Handle entries until ``stop`` while holding the lease; take over what a dead reader held."""
        await self.setup()
        last_claim = 0.0
        while not stop.is_set():
            try:
                if not await leases.hold(self.redis, self.lease, self.name, self.lease_ms):
                    await asyncio.sleep(self.lease_ms / 3000)
                    continue
                if time.monotonic() - last_claim > self.claim_idle_ms / 4000:
                    last_claim = time.monotonic()
                    claimed = await self.redis.xautoclaim(self.stream, self.group, self.name,
                                                          self.claim_idle_ms, "0-0", count=self.count)
                    await handle([e for e in claimed[1] if e[1]])
                    await handle(await self.read("0", None))
                await handle(await self.read(">", block_ms))
            except (RedisError, OSError) as e:
                self.on_error(e)
                await asyncio.sleep(1.0)


class LeasedReader:
    """A role that reads one :class:`LeasedStream` (its ``stream``) and handles the entries with its
    ``_handle`` (which acknowledges each): the projector, the director."""

    stream: LeasedStream

    async def _handle(self, entries: list[Entry]) -> int:
        raise NotImplementedError

    async def setup(self) -> None:
        """Create the consumer group (idempotent)."""
        await self.stream.setup()

    async def drain(self) -> int:
        """Handle everything waiting (this reader's pending entries first); returns how many."""
        return await self.stream.drain(self._handle)

    async def run(self, stop: asyncio.Event, block_ms: int = 1000) -> None:
        """Handle entries until ``stop`` while holding the lease; take over what a dead reader held."""
        await self.stream.run(self._handle, stop, block_ms)
