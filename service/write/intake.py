"""The first stage of a worker, reading: the command shards it leases, reading them through the
consumer group (the previous batch's held-back writes sent with the read), reading its own pending
commands again, taking over a dead worker's (:class:`Intake`); and the dead letters of commands that
cannot be done (:class:`DeadLetters`), which the later stages use too.
"""

from __future__ import annotations

import time
from typing import Any

from service.foundation import logs
from service.foundation.metrics import Metrics
from service.foundation.settings import Settings
from service.store.groups import Group
from service.store.keys import Keys
from service.store.leases import Leases
from service.write.held import HeldBack
from service.write.planning import Entry


class DeadLetters:
    """Moves commands that cannot be done to their shard's dead-letter stream, with the error; counts
    the failed attempts of a command, which goes there after ``max_attempts``."""

    def __init__(self, redis: Any, keys: Keys, group: Group, name: str, metrics: Metrics, log: Any,
                 max_attempts: int) -> None:
        self.redis, self.keys, self.group, self.name = redis, keys, group, name
        self.metrics, self.log, self.max_attempts = metrics, log, max_attempts
        self.attempts: dict[str, int] = {}

    async def move(self, e: Entry, error: str) -> None:
        """Move a command to its shard's dead-letter stream, with the error, and acknowledge it."""
        shard = self.keys.all_commands().index(e.stream)
        pipe = self.redis.pipeline(transaction=False)
        self.group.queue_dead_letter(pipe, self.keys.dead(shard), e.stream, e.id, {
            "c": e.raw or b"", "entry": e.id, "error": error[:2000], "worker": self.name})
        await pipe.execute()
        self.attempts.pop(e.id, None)
        self.metrics.dead.inc()
        self.log.error("dead_letter", entry=e.id, error=error[:200])

    async def failed(self, e: Entry, exc: BaseException) -> bool:
        """Count a failed attempt at a command: True when it went to the dead letters (it failed
        ``max_attempts`` times), False when it is to be tried again."""
        n = self.attempts.get(e.id, 0) + 1
        self.attempts[e.id] = n
        if n >= self.max_attempts:
            await self.move(e, f"{type(exc).__name__}: {exc}")
            return True
        self.log.warning("command_failed", entry=e.id, attempt=n, error=logs.error_text(exc))
        return False

    def done(self, entry_id: str) -> None:
        """A command was done after all: its failed attempts are forgotten."""
        self.attempts.pop(entry_id, None)


class Intake:
    """Reads a worker's commands (see the module docstring)."""

    def __init__(self, settings: Settings, keys: Keys, group: Group, leases: Leases | None, held: HeldBack,
                 dead: DeadLetters, metrics: Metrics, log: Any) -> None:
        self.settings, self.keys, self.group, self.leases = settings, keys, group, leases
        self.held, self.dead, self.metrics, self.log = held, dead, metrics, log
        # While the worker's loop runs it reads its leased shards; before (and in drain(), for tests
        # and tools) every shard.
        self.leasing = False
        self._trimmed = -1  # the shard (its index in shards()) trim_next trimmed last
        self._last_round = time.monotonic()  # the last rebalance (a lapsed lease says how long ago)

    def shards(self) -> list[str]:
        """The command streams this worker reads new commands from: its leased shards while it runs
        (not those it is handing over), else all."""
        if self.leasing and self.leases is not None:
            return [self.keys.commands(s) for s in self.leases.active]
        return self.keys.all_commands()

    def held_shards(self) -> list[str]:
        """The command streams whose commands delivered to this worker are its own to finish: every
        shard it holds, those it is handing over included (see :meth:`reread`), else all."""
        if self.leasing and self.leases is not None:
            return [self.keys.commands(s) for s in sorted(self.leases.owned)]
        return self.keys.all_commands()

    async def trim_next(self) -> int:
        """Retention, one shard a step: remove what every group has acknowledged from the next of the
        shards this worker reads (in turn), so that no step of the loop waits for all of them.
        Returns how many entries were removed."""
        shards = self.shards()
        if not shards:
            return 0
        self._trimmed = (self._trimmed + 1) % len(shards)
        return await self.group.trim([shards[self._trimmed]])

    def due_buckets(self) -> list[int] | None:
        """The buckets whose deadlines this worker fires (None: all): those of its leased shards,
        whose ticks it would read itself, so that workers share the timer work rather than repeat it."""
        if not (self.leasing and self.leases is not None):
            return None
        owned = set(self.leases.owned)
        return [b for b in range(self.keys.buckets) if b % self.keys.shards in owned]

    async def rebalance(self, in_hand: list[Entry]) -> list[Entry]:
        """Heartbeat and share the command shards with the other live workers (service.store.leases);
        returns what a gained shard's previous owner left pending (a dead worker's commands), to be
        done before anything new is read.

        A shard beyond this worker's share is released only once nothing read from it is in hand
        and its acknowledgements are sent.

        A lease that lapsed (this worker was held up for most of a lease) is said so, and a shard
        taken back at once leaves out of its claim the commands still in hand here: they are this
        worker's own, not a dead worker's (logged "claimed", they read as a command someone had
        left unread: issue 33's stall).
        """
        if self.leases is None:
            return []
        await self.held.flush()
        busy = {e.stream for e in in_hand}
        # Wall-clock time, not the game's clock (which tests fix): leases expire in Redis.
        gained, lost = await self.leases.rebalance(
            int(time.time() * 1000), busy=lambda s: self.keys.commands(s) in busy)
        self.metrics.shards.set(len(self.leases.owned))
        if gained or lost:
            self.log.info("shards", gained=gained, lost=lost, owned=sorted(self.leases.owned))
        if self.leases.lapsed:
            self.log.warning("lease_lapsed", shards=self.leases.lapsed,
                             since_last_round_s=round(time.monotonic() - self._last_round, 2))
        self._last_round = time.monotonic()
        held = {(e.stream, e.id) for e in in_hand}
        out: list[Entry] = []
        for s in gained:
            out += await self._claim_shard(self.keys.commands(s), idle_ms=0, in_hand=held)
        return out

    async def read(self, block: bool = True) -> list[Entry]:
        """The next batch of new commands for this consumer, the held-back writes sent before it in
        the same pipeline."""
        return self.entries(await self.group.read(self.shards(), self.settings.batch,
                                                  self.settings.block_ms if block else None,
                                                  pipe=self.held.take()))

    def queue_read(self, pipe: Any) -> None:
        """Queue a non-blocking read of the next batch on a caller's pipeline (see :meth:`entries`)."""
        self.group.queue_read(pipe, self.shards(), self.settings.batch)

    async def reread(self) -> list[Entry]:
        """This worker's own pending commands, read again (after a lost reply or a Redis restart).

        Every shard it holds is read again, those it is handing over too: a shard is handed over
        only once nothing read from it is in hand, so a command of it dropped from the hand (a batch
        cut short by a Redis error) must come back to the hand, else the shard went with it pending
        here, and waited for whoever took the shard next to claim it (a lease later, or for ever
        while nobody did: issue 33's stall, tests/faults/test_handover.py).

        The held-back acknowledgements are sent first, so only commands not finished come back; a
        command also in hand is decided once (``group_by_table`` drops the second copy)."""
        await self.held.flush()
        got = await self.group.own_pending(self.held_shards(), self.settings.batch,
                                           limit=10 * self.settings.batch)
        return self.entries(got)

    async def claim(self) -> list[Entry]:
        """Take over commands another consumer has held for too long (it probably died)."""
        out: list[Entry] = []
        held = self.held_shards()
        for key in held:
            out += await self._claim_shard(key, self.settings.claim_idle_ms)
        self.metrics.pending.set(await self.group.pending(held))
        return out

    async def _claim_shard(self, key: str, idle_ms: int,
                           in_hand: set[tuple[str, str]] | frozenset[tuple[str, str]] = frozenset()
                           ) -> list[Entry]:
        """The commands of one shard pending for at least ``idle_ms`` with any consumer, now ours
        (but those ``in_hand`` already)."""
        out = [e for e in self.entries(await self.group.claim(key, idle_ms, self.settings.batch,
                                                              limit=10 * self.settings.batch))
               if (e.stream, e.id) not in in_hand]
        if out:
            self.metrics.claimed.inc(len(out))
            self.log.warning("claimed", commands=len(out), shard=key)
            out = [e for e in out if not await self._too_often(e)]
        return out

    async def _too_often(self, e: Entry) -> bool:
        """Dead-letter a command that has been delivered too many times (it may crash workers)."""
        times = await self.group.times_delivered(e.stream, e.id)
        if times > self.settings.max_attempts:
            await self.dead.move(e, f"delivered {times} times without completing")
            return True
        return False

    @staticmethod
    def entries(read: list[tuple[str, str, Any]]) -> list[Entry]:
        """Entries of what a read of the command streams returned."""
        return [Entry(stream, mid, fields.get(b"c") or fields.get("c")) for stream, mid, fields in read]
