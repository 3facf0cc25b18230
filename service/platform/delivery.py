"""Delivering outbox messages to one chat platform: at least once, in order per chat, several processes.

Every platform-facing adapter (the HTTP webhook, Telegram) delivers outbox messages the same way, so
the platform-neutral part lives here; the adapter only supplies a *handler* that sends one message
(already :meth:`~service.platform.outbox.Message.rendered`: its text and action labels are in the recipient's
language; with the web table configured, its :attr:`~service.platform.outbox.Message.link` set by
:mod:`service.platform.links`)::

    delivery = Delivery(redis, settings, "acme", keys=keys)  # one per process and platform
    await delivery.run(handler, stop)                     # until ``stop`` is set

    async def handler(msg: Message) -> None:              # return: delivered
        ...                                               # raise Retry(after_s): try again later
                                                          # raise Permanent(error): dead-letter now

What it guarantees:

- **At least once.**  The outbox streams (``out:{b}``, the gateway's replies included) are read
  through a consumer group per platform (``deliver:<platform>``); an entry is acknowledged only once
  it was delivered or dead-lettered.  A redelivery carries the same ``Message.id``: receivers use it as
  their idempotency key.
- **Only this platform.**  Messages addressed to a room or player of another platform are
  acknowledged and skipped (each platform has its own group, so each sees every message).
- **Order per chat.**  A table's messages to one recipient are in one stream, in order.  Within a
  process, the messages of one recipient go through one *lane* (a FIFO with one task), so they are
  delivered one after the other, retries included; other recipients are not held up.  Across
  processes, the outbox streams are split into ``partitions`` and each partition is *leased* to one
  process at a time (a Redis key with a TTL, renewed while the process lives).  Live processes share
  the partitions fairly; a process that dies loses its leases when they expire, and the next owner
  first takes over (``XAUTOCLAIM``) the entries the dead one held, before reading new ones.  A read
  whose reply was lost (redis-py resends a read whose connection broke, so the entries it delivered
  never arrive) is found within ``reread_s``, or at once after a Redis error: the process reads its
  own pending entries again (:meth:`service.store.groups.Group.own_pending`), leaving out those in hand,
  on every partition it holds (one it is letting go too), and lets no partition go before it has.
- **Order per person.**  A person's messages to their private chat and to them as a player share a
  lane (:func:`recipient_key`), so a refusal and the hand after it arrive in that order.
- **Bounded.**  Every ``trim_s`` a process trims the outbox streams it acknowledged entries on: what
  every platform's group has acknowledged is removed (:meth:`service.store.groups.Group.trim`), never what
  one of them has not delivered; ``keep_s`` keeps a grace period for debugging (off by default).
- **Nothing a failover takes back.**  With replicas (``CINQ_REDIS_MIN_REPLICAS``), what a read brought
  is handed to the lanes only once the replicas have it (:mod:`service.store.replicas`): a platform is
  never shown a message, or a table version, that a failover to a replica would undo.  Too few in time
  is a Redis error: the entries stay pending and are read again.
- **Never silently away.**  A message whose handler raised :class:`Permanent`, or :class:`Retry` for
  the last allowed attempt, goes to the platform's dead-letter stream with its error;
  :meth:`Delivery.dead_letters` lists it and :meth:`Delivery.replay` sends it again (through a replay
  stream that the running delivery processes read like the outbox).

Retries wait ``Retry.after_s`` when given (a platform's ``Retry-After``), else an exponential
backoff with full jitter (:func:`backoff`).  The handler's contract, the tuning, the metrics and the
Redis keys are in :mod:`service.platform.delivery_model`; what happens to one message once read (its
lane, its attempts, its dead letter) in :mod:`service.platform.sending`.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import time
import zlib
from collections.abc import Callable
from typing import Any

from redis.exceptions import RedisError

from service.foundation import logs
from service.foundation.settings import Settings
from service.platform.delivery_model import (
    DeadLetter,
    DeliveryKeys,
    DeliveryMetrics,
    DeliveryOptions,
    Handler,
    Permanent,
    Retry,
    _Item,
    addressed_to,
    recipient_key,
    wait_or_stop,
)
from service.platform.links import Links
from service.platform.outbox import Message
from service.platform.partitions import Partitioning, _Partition
from service.platform.sending import Sending
from service.store.acks import Acks
from service.store.decoding import as_text
from service.store.doorbell import Doorbell
from service.store.groups import Group, Pause, backoff
from service.store.keys import Keys
from service.store.leases import Leases
from service.store.replicas import Replicas

__all__ = ["DeadLetter", "Delivery", "DeliveryKeys", "DeliveryMetrics", "DeliveryOptions", "Permanent",
           "Retry", "addressed_to", "backoff", "recipient_key"]



class Delivery(Sending, Partitioning):
    """One process's delivery of the outbox to one platform (see the module docstring)."""

    def __init__(self, redis: Any, settings: Settings, platform: str, consumer: str | None = None, *,
                 options: DeliveryOptions | None = None, metrics: DeliveryMetrics | None = None,
                 rng: random.Random | None = None, clock: Callable[[], float] = time.time,
                 keys: Keys, links: Links | None = None) -> None:
        self.redis = redis
        # The web table's links on each message: given, else from the settings (none without
        # CINQ_WEB_PUBLIC_URL).
        self.links = links or Links.of(settings, clock)
        self.settings = settings
        self.platform = platform
        self.consumer = consumer or f"d-{secrets.token_hex(4)}"
        self.options = options or DeliveryOptions()
        self.metrics = metrics or DeliveryMetrics()
        self.rng = rng or random.Random()
        self.clock = clock
        self.keys = keys
        self.dk = DeliveryKeys(self.keys, platform)
        self.log = logs.get("delivery").bind(platform=platform, consumer=self.consumer)
        self.owned: dict[int, _Partition] = {}
        self.leases = Leases(redis, self.consumer, self.options.partitions, self.dk.members, self.dk.lease,
                             self.options.lease_ms)
        self.group = Group(redis, self.dk.group, self.consumer)
        self.acks = Acks(redis, self.dk.group)
        self.replicas = Replicas.of(redis, settings, self.keys)
        # Entries read and not finished yet (in a lane): a re-read of pending entries leaves them out.
        self._in_hand: set[tuple[str, str]] = set()
        self._next_reread = time.monotonic() + self.options.reread_s
        # A read may have been lost (a Redis error) and not read again yet: no partition is let go
        # meanwhile (see reread_soon).
        self.lost_read = False
        # Streams this process acknowledged entries on since the last trim, and when that is due.
        self._acked: set[str] = set()
        self._next_trim = time.monotonic() + self.options.trim_s
        # On a cluster (see _read_rung): the doorbell, the streams to read again, the next sweep.
        self._bell = Doorbell(redis, self.keys)
        self._hot: set[str] = set()
        self._next_sweep = 0.0
        self._inflight = 0
        self._room = asyncio.Event()
        self._room.set()

    # -- layout -----------------------------------------------------------------------------------

    def streams_of(self, partition: int) -> list[str]:
        """The streams a partition covers (partition 0 also has the replay stream)."""
        p = self.options.partitions
        out = [self.keys.outbox(b) for b in range(self.keys.buckets) if b % p == partition]
        return [*out, self.dk.replay] if partition == 0 else out

    async def setup(self) -> None:
        """Create the platform's consumer group on every stream (idempotent)."""
        await self.group.create(s for p in range(self.options.partitions) for s in self.streams_of(p))

    # -- the loop -----------------------------------------------------------------------------------

    async def run(self, handler: Handler, stop: asyncio.Event) -> None:
        """Deliver this platform's messages with ``handler`` until ``stop`` is set.

        On stop, the deliveries in hand finish their current attempt; messages not delivered stay
        pending in the group and are taken over by the next owner of their partition.
        """
        pause = Pause()
        while not stop.is_set():
            try:
                await self.setup()
                break
            except (RedisError, OSError) as e:  # Redis not there yet: wait for it, do not die
                wait = pause.failed()
                self.log.warning("redis_error", error=logs.error_text(e), retry_in=wait)
                await wait_or_stop(stop, wait)
        lanes: list[asyncio.Queue[_Item | None]] = [asyncio.Queue() for _ in range(self.options.lanes)]
        workers = [asyncio.create_task(self._lane(q, handler, stop)) for q in lanes]
        pause.ok()
        next_round = 0.0
        try:
            while not stop.is_set():
                try:
                    # Between two reads, never during one: a partition is released only when nothing
                    # read from it is still in hand (a read in flight would bring entries of a
                    # partition that another process may already own).
                    if time.monotonic() >= next_round:
                        await self.rebalance()
                        next_round = time.monotonic() + self.options.lease_ms / 3000
                    await self._read_once(lanes, stop)
                    await self._trim_due()
                    pause.ok()
                except (RedisError, OSError) as e:
                    # A read in flight may have been delivered to this process and lost: as soon as
                    # Redis answers, this process's pending entries are read again.
                    self.reread_soon()
                    wait = pause.failed()
                    self.log.warning("redis_error", error=logs.error_text(e), retry_in=wait)
                    await wait_or_stop(stop, wait)
                    with contextlib.suppress(RedisError, OSError):
                        await self.setup()
                except Exception as e:  # a bug must not stop the deliveries: what was read stays pending
                    self.reread_soon()
                    with contextlib.suppress(Exception):
                        self.log.error("delivery_loop_failed", error=logs.error_text(e))
                    await wait_or_stop(stop, pause.failed())
        finally:
            for q in lanes:
                q.put_nowait(None)
            await asyncio.gather(*workers, return_exceptions=True)
            with contextlib.suppress(RedisError, OSError):
                await self._leave()

    async def _read_once(self, lanes: list[asyncio.Queue[_Item | None]], stop: asyncio.Event) -> None:
        if self._inflight >= self.options.max_inflight:
            self._room.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._room.wait(), self.options.block_ms / 1000)
            return
        entries: list[tuple[str, str, Any]] = []
        for owned in list(self.owned.values()):
            if not owned.claimed:
                entries += await self._claim(owned)
                owned.claimed = True
        # Not the partitions being let go (leases.draining), in the order they were taken.
        streams = [s for p, part in self.owned.items() if p not in self.leases.draining for s in part.streams]
        entries += await self._reread_if_due()
        if not entries:
            if not streams:
                await wait_or_stop(stop, self.options.block_ms / 1000)
                return
            if self.group.can_block(streams):
                entries = await self.group.read(streams, self.options.batch, self.options.block_ms)
            else:
                entries = await self._read_rung(streams)
        if entries:
            # What was read may be a write no replica has yet: nothing is sent before they have it.
            await self.replicas.confirm()
        skip: dict[str, list[str]] = {}
        handed = 0
        for stream, mid, f in entries:
            if (stream, mid) in self._in_hand:  # claimed or re-read while a lane holds it
                continue
            raw = as_text((f or {}).get(b"m") or (f or {}).get("m") or "")
            try:
                msg = Message.model_validate_json(raw)
            except ValueError:
                msg = None
            if msg is None or not addressed_to(msg, self.platform):
                skip.setdefault(stream, []).append(mid)
                continue
            of = self._partition_of(stream)
            if of is not None:
                of.inflight += 1
            self._inflight += 1
            self._in_hand.add((stream, mid))
            lane = zlib.crc32(recipient_key(msg).encode()) % len(lanes)
            lanes[lane].put_nowait(_Item(stream, mid, raw, msg))
            handed += 1
        if handed:
            # The lanes send first: the next read (1,024 streams on one Redis) is packed and sent after
            # their requests are on the wire, not before (issue 33: ~0.5 ms more to a first callback).
            await asyncio.sleep(0)
        if skip:
            pipe = self.redis.pipeline(transaction=False)
            for stream, ids in skip.items():
                pipe.xack(stream, self.dk.group, *ids)
            await pipe.execute()
            self._acked.update(skip)
            self.metrics.deliveries.labels(self.platform, "skipped").inc(sum(map(len, skip.values())))

    async def _read_rung(self, streams: list[str]) -> list[tuple[str, str, Any]]:
        """On a Redis Cluster: sweep every owned outbox now and then, and in between read only those
        the doorbell rang (service.store.doorbell), plus those that had more than one batch waiting."""
        o = self.options
        now = time.monotonic()
        if now >= self._next_sweep:
            self._next_sweep = now + o.sweep_s
            if self._bell.last is None:
                await self._bell.start()  # from now on; the sweep covers what came before
            got = await self.group.read(streams, o.batch)
        else:
            owned = set(streams)
            hot = [s for s in self._hot if s in owned]
            if not hot:
                wait_ms = int(min(o.block_ms / 1000, max(self._next_sweep - now, 0.001)) * 1000)
                rung = await self._bell.wait(wait_ms)
                hot = [s for b in rung if (s := self.keys.outbox(b)) in owned]
            got = await self.group.read(hot, o.batch) if hot else []
        # A stream that gave entries may have more: read it again before waiting on the bell.
        self._hot = {s for s, _, _ in got}
        return got
