"""The third stage of a worker: the compare-and-appends of a batch, in one round trip.

One pipeline carries, in order: what the previous batch held back (its acknowledgements, index
writes, AI ticks: :mod:`service.write.held`), one compare-and-append per planned table
(:class:`~service.store.event_store.EventStore`), the wait for the replicas a failover could promote
(:mod:`service.store.replicas`; nothing without replicas), and the read of the next batch.  The
appends' own acknowledgements are only queued once their results are known (the finishing stage),
so they go out with the next round trip, after the replicas have confirmed the appends.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from service.store.event_store import AppendResult, EventStore
from service.store.replicas import Replicas
from service.store.streams import parse
from service.write.held import HeldBack
from service.write.planning import TableBatch


class Appender:
    """Sends a batch's appends (see the module docstring)."""

    def __init__(self, store: EventStore, replicas: Replicas, held: HeldBack) -> None:
        self.store, self.replicas, self.held = store, replicas, held

    async def send(self, planned: list[TableBatch], read: Callable[[Any], None] | None,
                   ) -> tuple[list[AppendResult], list[tuple[str, str, Any]]]:
        """One round trip: the held-back writes, the appends of ``planned`` (in order) and, with
        ``read`` (which queues a read on the pipeline), the next batch.  Returns the appends' results
        and what the read returned (stream, entry id, fields)."""
        if planned and not self.store.ready:
            await self.store.ensure_scripts()
        pipe = self.held.take()
        first = len(pipe)  # the replies before this are the held-back writes'
        for b in planned:
            assert b.append is not None  # planned holds the batches that have one
            self.store.queue_append(pipe, b.append)
        # The appends are acknowledged (by the finishing stage, with the next round trip) only once
        # the replicas have them: the wait goes after them, in this round trip.
        mark = self.replicas.queue(pipe) if planned else None
        after = len(pipe)
        if read is not None:
            read(pipe)
        raws = await pipe.execute()
        if mark is not None:
            self.replicas.check(mark, raws)
        results = [self.store.result(r) for r in raws[first:first + len(planned)]]
        return results, parse(raws[after:])
