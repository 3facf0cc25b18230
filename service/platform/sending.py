"""What happens to one outbox message once a delivery has read it: its lane, its attempts, its
dead letter (:class:`Sending`, a part of :class:`service.platform.delivery.Delivery`).

The lane of a recipient sends its messages one after the other (:meth:`Sending._lane`); a message
is rendered in its recipient's language, handed to the platform's handler, retried on
:class:`Retry` (or a bug in the handler) with a backoff, and dead-lettered on :class:`Permanent` or
after the last attempt.  Dead letters are listed and replayed from here too, and what was acknowledged
is trimmed (the retention, :meth:`Sending._trim_due`); the lanes' acknowledgements go in batches
(:mod:`service.store.acks`).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable
from typing import Any

from service.foundation.settings import Settings
from service.platform import delivery_model as dm
from service.platform.outbox import Message
from service.store.acks import Acks
from service.store.decoding import as_text
from service.store.groups import Group, backoff


class Sending:
    """The sending half of a :class:`~service.platform.delivery.Delivery`: it is mixed into that class
    and uses the state the delivery sets up (the attributes declared below)."""

    redis: Any
    platform: str
    options: dm.DeliveryOptions
    metrics: dm.DeliveryMetrics
    rng: random.Random
    clock: Callable[[], float]
    dk: dm.DeliveryKeys
    group: Group
    acks: Acks  # the lanes' acknowledgements, batched (service.store.acks)
    links: Any  # service.platform.links.Links | None
    log: Any
    settings: Settings
    _acked: set[str]
    _next_trim: float
    _in_hand: set[tuple[str, str]]
    _inflight: int
    _room: asyncio.Event
    setup: Callable[[], Awaitable[None]]
    # A message of a stream left its lane (the delivery counts what each partition holds).
    _partition_done: Callable[[str], None]

    # -- retention -------------------------------------------------------------------------------

    async def _trim_due(self) -> None:
        """Retention: trim the streams acknowledged on since the last time, every ``trim_s``."""
        if time.monotonic() < self._next_trim or not self._acked:
            return
        self._next_trim = time.monotonic() + self.options.trim_s
        streams, self._acked = sorted(self._acked), set()
        keep_s = max(self.options.keep_s, self.settings.outbox_keep_s)
        await self.group.trim(streams, keep_ms=int(keep_s * 1000),
                              now_ms=int(self.clock() * 1000))

    # -- dead letters -------------------------------------------------------------------------------

    async def dead_letters(self, count: int = 1000) -> list[dm.DeadLetter]:
        """The dead letters of this platform, oldest first."""
        out = []
        for mid, f in await self.redis.xrange(self.dk.dead, count=count):
            fields = {as_text(k): as_text(v) for k, v in f.items()}
            raw = fields.get("m", "")
            try:
                msg: Message | None = Message.model_validate_json(raw)
            except ValueError:
                msg = None
            out.append(dm.DeadLetter(id=as_text(mid), message=msg, raw=raw, error=fields.get("error", ""),
                                  attempts=int(fields.get("attempts", 0)), stream=fields.get("stream", ""),
                                  entry=fields.get("entry", ""), at=float(fields.get("at", 0))))
        return out

    async def replay(self, ids: list[str] | None = None) -> int:
        """Send dead letters again (all of them when ``ids`` is None); returns how many.

        They go to the platform's replay stream, which the running delivery processes read, and
        leave the dead-letter stream.  Their ``Message.id`` is unchanged, so a receiver that did get
        one after all recognises it.
        """
        letters = await self.dead_letters(count=100_000)
        chosen = [d for d in letters if ids is None or d.id in set(ids)]
        if not chosen:
            return 0
        await self.setup()
        pipe = self.redis.pipeline(transaction=False)
        for d in chosen:
            pipe.xadd(self.dk.replay, {"m": d.raw, "c": f"replay:{d.id}"})
            pipe.xdel(self.dk.dead, d.id)
        await pipe.execute()
        self.log.info("replayed", count=len(chosen))
        return len(chosen)

    async def _dead_letter(self, it: dm._Item, error: str, attempts: int) -> None:
        pipe = self.redis.pipeline(transaction=False)
        self.group.queue_dead_letter(pipe, self.dk.dead, it.stream, it.entry, {
            "m": it.raw, "stream": it.stream, "entry": it.entry, "error": error[:2000],
            "attempts": attempts, "at": self.clock()})
        await pipe.execute()
        self._acked.add(it.stream)
        self.metrics.dead.labels(self.platform).inc()
        self.metrics.deliveries.labels(self.platform, "dead").inc()
        self.log.error("dead_letter", message=it.msg.id, table=it.msg.table, entry=it.entry,
                       error=error[:200], attempts=attempts)

    async def _lane(self, q: asyncio.Queue[dm._Item | None], handler: dm.Handler,
                    stop: asyncio.Event) -> None:
        while True:
            it = await q.get()
            if it is None:
                return
            try:
                if not stop.is_set():
                    await self._deliver(it, handler, stop)
            except Exception as e:  # Redis down, or a bug: the lane goes on with the next message
                # Not acknowledged: the entry stays pending and is delivered again after a claim.
                with contextlib.suppress(Exception):
                    self.log.warning("lane_error", message=it.msg.id, error=repr(e)[:200])
            finally:
                self._inflight -= 1
                self._in_hand.discard((it.stream, it.entry))
                self._partition_done(it.stream)
                self._room.set()

    async def _deliver(self, it: dm._Item, handler: dm.Handler, stop: asyncio.Event) -> None:
        o = self.options
        try:
            # The worker leaves the text deferred: it is written here, in the recipient's language.
            msg = it.msg.rendered()
            if self.links is not None:  # the web table's link, when it is configured
                msg = self.links.attach(msg)
        except Exception as e:  # a message that cannot be rendered never will be: keep it for an operator
            await self._dead_letter(it, f"unrenderable: {type(e).__name__}: {e}", 0)
            return
        attempt = 0
        while True:
            attempt += 1
            try:
                await handler(msg)
            except dm.Permanent as e:
                await self._dead_letter(it, f"permanent: {e}", attempt)
                return
            except Exception as e:  # Retry, or a bug in the handler: both are worth another try
                after = e.after_s if isinstance(e, dm.Retry) else None
                reason = str(e) if isinstance(e, dm.Retry) else f"{type(e).__name__}: {e}"
                if attempt >= o.max_attempts:
                    await self._dead_letter(it, f"gave up after {attempt} attempts: {reason}", attempt)
                    return
                wait = after if after is not None else backoff(attempt, o.backoff_base_s, o.backoff_cap_s,
                                                               self.rng)
                wait = min(max(wait, 0.0), o.max_wait_s)
                self.metrics.retries.labels(self.platform).inc()
                self.log.info("retry", message=it.msg.id, attempt=attempt, wait_s=round(wait, 3),
                              reason=reason[:200])
                if await dm.wait_or_stop(stop, wait):
                    return  # stopping: left pending for the next owner
                continue
            await self.acks.ack(it.stream, it.entry)
            self._acked.add(it.stream)
            self.metrics.deliveries.labels(self.platform, "delivered").inc()
            written_ms = int(it.entry.split("-")[0])
            if it.stream != self.dk.replay:
                self.metrics.latency.labels(self.platform).observe(max(self.clock() - written_ms / 1000, 0.0))
            return
