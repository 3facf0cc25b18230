"""The partitions of the outbox one delivery process owns (:class:`Partitioning`, a part of
:class:`service.platform.delivery.Delivery`): leased through :class:`service.store.leases.Leases`,
each taken over with what its previous owner left pending before anything new is read, and what was
delivered to this process on them and lost (a read's reply) read again before any of them is let go.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from service.platform.delivery_model import DeliveryOptions
from service.store.groups import Group
from service.store.leases import Leases


@dataclass
class _Partition:
    streams: list[str]
    inflight: int = 0
    claimed: bool = False


class Partitioning:
    """The partition half of a :class:`~service.platform.delivery.Delivery`: it is mixed into that
    class and uses the state the delivery sets up (the attributes declared below)."""

    owned: dict[int, _Partition]
    leases: Leases
    group: Group
    options: DeliveryOptions
    clock: Callable[[], float]
    log: Any
    streams_of: Callable[[int], list[str]]
    lost_read: bool
    _next_reread: float
    _in_hand: set[tuple[str, str]]

    async def rebalance(self) -> None:
        """One round of the partition protocol (:class:`service.store.leases.Leases`): heartbeat, renew
        this process's leases, release the partitions beyond its fair share once nothing of theirs is
        in hand, take free ones up to it (none is let go while a read lost to a Redis error has not
        been read again: ``lost_read``).  The loop of :meth:`run` calls it every third of a lease;
        public so that tests can drive it."""
        gained, lost = await self.leases.rebalance(
            int(self.clock() * 1000),
            busy=lambda p: self.lost_read or (p in self.owned and self.owned[p].inflight > 0))
        for p in lost:
            self.owned.pop(p, None)
            self.log.info("partition_left", partition=p)
        for p in gained:
            self.owned[p] = _Partition(self.streams_of(p))

    async def _leave(self) -> None:
        await self.leases.leave()
        self.owned.clear()

    async def _claim(self, part: _Partition) -> list[tuple[str, str, Any]]:
        """Take over every entry pending in the group on a partition just acquired (a previous owner's,
        or this consumer's own from before a restart), oldest first, before reading new ones."""
        out = []
        for s in part.streams:
            out += await self.group.claim(s, 0, self.options.batch, limit=1 << 30)
        if out:
            self.log.warning("claimed", entries=len(out))
        return out

    def _partition_done(self, stream: str) -> None:
        part = self._partition_of(stream)
        if part is not None:
            part.inflight -= 1

    def _partition_of(self, stream: str) -> _Partition | None:
        for part in self.owned.values():
            if stream in part.streams:
                return part
        return None

    # -- what was delivered here and lost ------------------------------------------------------------

    async def _reread_if_due(self) -> list[tuple[str, str, Any]]:
        """Every ``reread_s``, or at once after :meth:`reread_soon`: this process's pending entries
        of every partition it holds, those being let go too.  A partition is let go once nothing read
        from it is in hand, so an entry of it delivered here and lost (a read's reply) must come back
        to the hand, or the partition would go with it pending here, to wait for whoever takes the
        partition next (issue 33's stall; the worker's: tests/faults/test_handover.py)."""
        if time.monotonic() < self._next_reread:
            return []
        self._next_reread = time.monotonic() + self.options.reread_s
        got = await self.reread([s for part in self.owned.values() for s in part.streams])
        self.lost_read = False
        return got

    def reread_soon(self) -> None:
        """A read may have been delivered to this process and lost (a Redis error, a failed loop
        step): this process's pending entries are read again at its next read, and until then no
        partition is let go (what was lost is not in hand, so its partition would count as idle)."""
        self._next_reread = 0.0
        self.lost_read = True

    async def reread(self, streams: list[str]) -> list[tuple[str, str, Any]]:
        """This process's pending entries of ``streams`` that no lane holds: delivered to it by a read
        whose reply was lost (see :mod:`service.platform.delivery`).  Public so that tests can drive it."""
        # Lanes go on while the read is under way: an entry in hand when it started may be finished
        # (acknowledged, out of the hand) by the time it returns, and is not to be delivered again.
        held = set(self._in_hand)
        got = [e for e in await self.group.own_pending(streams, self.options.batch)
               if (e[0], e[1]) not in held and (e[0], e[1]) not in self._in_hand]
        if got:
            self.log.warning("reread", entries=len(got))
        return got
