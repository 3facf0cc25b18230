"""Acknowledging stream entries in batches: the acknowledgements asked for in one turn of the event loop
go to Redis together, one ``XACK`` per stream in one pipeline.

A delivery process acknowledges each message once its lane has delivered it.  A move's result is
several messages (the group's table, each player's hand) that are delivered by as many lanes at
nearly the same time; one ``XACK`` each cost a round trip each, and on a machine short of cores every
round trip is a wake-up of Redis and of the process (issue 33: the webhook's move -> first callback).
:meth:`Acks.ack` returns once the entry is acknowledged, as a plain ``XACK`` would, so that what the
caller does next (take the entry out of its hand, send the recipient's next message) still comes
after it; a Redis error reaches every caller of the batch, and their entries stay pending.
"""

from __future__ import annotations

import asyncio
from typing import Any


class Acks:
    """The acknowledgements of one consumer group, sent in batches (see the module docstring)."""

    def __init__(self, redis: Any, group: str) -> None:
        self.redis = redis
        self.group = group
        self._batch: dict[str, list[str]] = {}
        self._done: asyncio.Future[None] | None = None
        self._flushing: set[asyncio.Task[None]] = set()  # the loop keeps only weak references to tasks
        self.sent = 0  # XACK commands sent (one per stream and batch): what the tests count

    async def ack(self, stream: str, entry: str) -> None:
        """Acknowledge ``entry`` of ``stream`` with the others asked for in this turn of the loop."""
        if self._done is None:
            loop = asyncio.get_running_loop()
            self._done = loop.create_future()
            # After the callbacks already due in this turn: the lanes woken with this one ack too.
            loop.call_soon(self._start_flush)
        self._batch.setdefault(stream, []).append(entry)
        await asyncio.shield(self._done)

    def _start_flush(self) -> None:
        task = asyncio.ensure_future(self._flush())
        self._flushing.add(task)
        task.add_done_callback(self._flushing.discard)

    async def _flush(self) -> None:
        batch, done = self._batch, self._done
        self._batch, self._done = {}, None
        assert done is not None
        try:
            pipe = self.redis.pipeline(transaction=False)
            for stream, entries in batch.items():
                pipe.xack(stream, self.group, *entries)
            await pipe.execute()
            self.sent += len(batch)
        except asyncio.CancelledError:
            done.cancel()
            raise
        except Exception as e:  # every caller of the batch learns of it (the entries stay pending)
            done.set_exception(e)
            done.exception()  # retrieved: no "never retrieved" warning if every caller was cancelled
        else:
            done.set_result(None)
