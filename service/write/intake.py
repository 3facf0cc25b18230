"""How a worker takes its commands in (:class:`Intake`, a part of :class:`service.write.worker.Worker`):
the shards it leases, reading through the consumer group (the previous batch's writes sent with the
next read), reading its own pending commands again, taking over a dead worker's, and dead letters.
"""

from __future__ import annotations

import time
from typing import Any

from service.foundation.metrics import Metrics
from service.foundation.settings import Settings
from service.store.groups import Group
from service.store.keys import Keys
from service.store.leases import Leases
from service.write.planning import Entry


class Intake:
    """The reading half of a :class:`~service.write.worker.Worker`: it is mixed into that class and
    uses the state the worker sets up (the attributes declared below)."""

    redis: Any
    settings: Settings
    keys: Keys
    name: str
    group: Group
    leases: Leases | None
    metrics: Metrics
    log: Any
    attempts: dict[str, int]
    retry: list[Entry]
    _leasing: bool
    _later: Any

    def shards(self) -> list[str]:
        """The command streams this worker reads now: its leased shards while it runs, else all."""
        if self._leasing and self.leases is not None:
            return [self.keys.commands(s) for s in self.leases.active]
        return self.keys.all_commands()

    def due_buckets(self) -> list[int] | None:
        """The buckets whose deadlines this worker fires (None: all): those of its leased shards,
        whose ticks it would read itself, so that workers share the timer work rather than repeat it."""
        if not (self._leasing and self.leases is not None):
            return None
        owned = set(self.leases.owned)
        return [b for b in range(self.keys.buckets) if b % self.keys.shards in owned]

    async def rebalance(self, in_hand: list[Entry]) -> None:
        """Heartbeat and share the command shards with the other live workers (service.store.leases).

        A shard beyond this worker's share is released only once nothing read from it is in hand
        and its acknowledgements are sent; a shard gained first takes over what its previous owner
        left pending (a dead worker's commands), before anything new is read.
        """
        if self.leases is None:
            return
        await self.flush()
        busy = {e.stream for e in in_hand}
        # Wall-clock time, not self.clock (the game's clock, which tests fix): leases expire in Redis.
        gained, lost = await self.leases.rebalance(
            int(time.time() * 1000), busy=lambda s: self.keys.commands(s) in busy)
        self.metrics.shards.set(len(self.leases.owned))
        if gained or lost:
            self.log.info("shards", gained=gained, lost=lost, owned=sorted(self.leases.owned))
        for s in gained:
            self.retry += await self._claim_shard(self.keys.commands(s), idle_ms=0)

    async def flush(self) -> None:
        """Send the acknowledgements and index writes still held back (see :meth:`read`)."""
        pipe, self._later = self._later, None
        if pipe is not None:
            await pipe.execute()

    async def read(self, block: bool = True) -> list[Entry]:
        """The next batch of new commands for this consumer.

        The previous batch's acknowledgements, index writes and AI ticks go in the same pipeline,
        before the read: one round trip instead of two.  Until then those commands stay pending, so a
        crash in between only means a redelivery, which the append script recognises.
        """
        pipe, self._later = self._later, None
        if pipe is None:
            pipe = self.redis.pipeline(transaction=False)
        return self._entries(await self.group.read(self.shards(), self.settings.batch,
                                                   self.settings.block_ms if block else None, pipe=pipe))

    async def reread(self) -> list[Entry]:
        """This worker's own pending commands, read again (after a lost reply or a Redis restart).

        The acknowledgements held back are sent first, so only commands not finished come back; a
        command also in hand is decided once (``cycle`` drops the second copy)."""
        await self.flush()
        got = await self.group.own_pending(self.shards(), self.settings.batch, limit=10 * self.settings.batch)
        return self._entries(got)

    async def claim(self) -> list[Entry]:
        """Take over commands another consumer has held for too long (it probably died)."""
        out: list[Entry] = []
        for key in self.shards():
            out += await self._claim_shard(key, self.settings.claim_idle_ms)
        self.metrics.pending.set(await self.group.pending(self.shards()))
        return out

    async def _claim_shard(self, key: str, idle_ms: int) -> list[Entry]:
        """The commands of one shard pending for at least ``idle_ms`` with any consumer, now ours."""
        out = self._entries(await self.group.claim(key, idle_ms, self.settings.batch,
                                                   limit=10 * self.settings.batch))
        if out:
            self.metrics.claimed.inc(len(out))
            self.log.warning("claimed", commands=len(out), shard=key)
            out = [e for e in out if not await self._too_often(e)]
        return out

    async def _too_often(self, e: Entry) -> bool:
        """Dead-letter a command that has been delivered too many times (it may crash workers)."""
        times = await self.group.times_delivered(e.stream, e.id)
        if times > self.settings.max_attempts:
            await self.dead_letter(e, f"delivered {times} times without completing")
            return True
        return False

    async def dead_letter(self, e: Entry, error: str) -> None:
        """Move a command to its shard's dead-letter stream, with the error, and acknowledge it."""
        shard = self.keys.all_commands().index(e.stream)
        pipe = self.redis.pipeline(transaction=False)
        self.group.queue_dead_letter(pipe, self.keys.dead(shard), e.stream, e.id, {
            "c": e.raw or b"", "entry": e.id, "error": error[:2000], "worker": self.name})
        await pipe.execute()
        self.attempts.pop(e.id, None)
        self.metrics.dead.inc()
        self.log.error("dead_letter", entry=e.id, error=error[:200])

    @staticmethod
    def _entries(read: list[tuple[str, str, Any]]) -> list[Entry]:
        return [Entry(stream, mid, fields.get(b"c") or fields.get("c")) for stream, mid, fields in read]
