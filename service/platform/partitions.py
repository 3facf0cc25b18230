"""The partitions of the outbox one delivery process owns (:class:`Partitioning`, a part of
:class:`service.platform.delivery.Delivery`): leased through :class:`service.store.leases.Leases`,
each taken over with what its previous owner left pending before anything new is read.
"""

from __future__ import annotations

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
