"""The third stage of a worker: the compare-and-appends of a batch, overlapped with its planning.

The appends go out in pipelines of at most :data:`CHUNK` tables while the rest of the batch is still
being decided: Redis runs one chunk's scripts on its own core while the worker decides the next, so
the worker's Python and the server's Lua no longer take turns (bench/results/pipeline.txt).  The
tables of one batch are distinct, so their appends do not depend on each other, and each is a
compare-and-append that a redelivery recognises: if one pipeline fails, the batch is read again and
what did land answers "duplicate" (exactly as when one pipeline's reply was lost).

The first pipeline carries what the previous batch held back (its acknowledgements, index writes, AI
ticks: :mod:`service.write.held`); every pipeline ends with the wait for the replicas a failover could
promote (:mod:`service.store.replicas`; nothing without replicas), on its own connection, so that an
append is acknowledged only once its replicas have it; the last one carries the read of the next
batch.  The appends' own acknowledgements are only queued once their results are known (the
finishing stage), so they go out with the next round trip.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from service.store.event_store import AppendResult, EventStore
from service.store.replicas import Replicas
from service.store.streams import parse
from service.write.held import HeldBack
from service.write.planning import TableBatch

# Tables per pipeline sent while the batch is being decided.  Small enough that the last pipeline, which
# nothing overlaps, is short (64 appends are ~2.5 ms of the server's time); large enough that a batch
# of a few commands (a machine at half load) goes in one round trip: cutting those in two (8 tables a
# pipeline) made the cycles slower, p50 2.1-2.3 -> 3.0-3.2 ms at 3,500 commands/s.
CHUNK = 64


class Appender:
    """Sends a batch's appends (see the module docstring)."""

    def __init__(self, store: EventStore, replicas: Replicas, held: HeldBack) -> None:
        self.store, self.replicas, self.held = store, replicas, held
        self.chunk = CHUNK  # (tests make it small)

    def start(self) -> Sending:
        """The appends of one batch, sent as they are planned (:meth:`Sending.add`)."""
        return Sending(self)

    async def _pipeline(self, planned: list[TableBatch], held: bool,
                        read: Callable[[Any], None] | None) -> tuple[list[AppendResult], list[Any]]:
        if planned and not self.store.ready:
            await self.store.ensure_scripts()
        pipe = self.held.take() if held else self.store.redis.pipeline(transaction=False)
        first = len(pipe)  # the replies before this are the held-back writes'
        for b in planned:
            assert b.append is not None  # planned holds the batches that have one
            self.store.queue_append(pipe, b.append)
        # The appends are acknowledged (by the finishing stage, with the next round trip) only once
        # the replicas have them: the wait goes after them, on this pipeline's connection.
        mark = self.replicas.queue(pipe) if planned else None
        after = len(pipe)
        if read is not None:
            read(pipe)
        raws = await pipe.execute()
        if mark is not None:
            self.replicas.check(mark, raws)
        return [self.store.result(r) for r in raws[first:first + len(planned)]], raws[after:]


class Sending:
    """The pipelines of one batch: :meth:`add` each planned table, then :meth:`done`."""

    def __init__(self, appender: Appender) -> None:
        self.appender = appender
        self.pending: list[TableBatch] = []
        self.flying: list[asyncio.Future[tuple[list[AppendResult], list[Any]]]] = []

    def add(self, b: TableBatch) -> bool:
        """Queue ``b``'s append; True when a full chunk was just sent off (the caller then yields once,
        ``await asyncio.sleep(0)``, so that its pipeline is written while the next tables are decided)."""
        self.pending.append(b)
        if len(self.pending) < self.appender.chunk:
            return False
        chunk, self.pending = self.pending, []
        self.flying.append(asyncio.ensure_future(self.appender._pipeline(chunk, not self.flying, None)))
        return True

    async def done(self, read: Callable[[Any], None] | None,
                   ) -> tuple[list[AppendResult], list[tuple[str, str, Any]]]:
        """Send the rest (with ``read``), wait for every pipeline, and return the appends' results in
        the order they were added and what the read returned.  Every pipeline is waited for before a
        failure is raised (the first, in order), so that none is still in flight afterwards."""
        last = self.appender._pipeline(self.pending, not self.flying, read)
        outcomes = await asyncio.gather(*self.flying, last, return_exceptions=True)
        for o in outcomes:
            if isinstance(o, BaseException):
                raise o
        results: list[AppendResult] = []
        for chunk_results, _ in outcomes:  # type: ignore[misc]
            results += chunk_results
        return results, parse(outcomes[-1][1])  # type: ignore[index]
