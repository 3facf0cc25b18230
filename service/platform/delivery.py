"""Delivering outbox messages to one chat platform: at least once, in order per chat, several processes.

Every platform-facing adapter (the HTTP webhook, Telegram) delivers outbox messages the same way, so
the platform-neutral part lives here; the adapter only supplies a *handler* that sends one message
(already :meth:`~service.platform.outbox.Message.rendered`: its text and action labels are in the recipient's
language)::

    delivery = Delivery(redis, settings, "acme")          # one per process and platform
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
  own pending entries again (:meth:`service.store.groups.Group.own_pending`), leaving out those in hand.
- **Order per person.**  A person's messages to their private chat and to them as a player share a
  lane (:func:`recipient_key`), so a refusal and the hand after it arrive in that order.
- **Bounded.**  Every ``trim_s`` a process trims the outbox streams it acknowledged entries on: what
  every platform's group has acknowledged is removed (:meth:`service.store.groups.Group.trim`), never what
  one of them has not delivered; ``keep_s`` keeps a grace period for debugging (off by default).
- **Never silently away.**  A message whose handler raised :class:`Permanent`, or :class:`Retry` for
  the last allowed attempt, goes to the platform's dead-letter stream with its error;
  :meth:`Delivery.dead_letters` lists it and :meth:`Delivery.replay` sends it again (through a replay
  stream that the running delivery processes read like the outbox).

Retries wait ``Retry.after_s`` when given (a platform's ``Retry-After``), else an exponential backoff
with full jitter (:func:`backoff`).

Redis keys added by this module (all with the deployment's ``key_prefix``; the hash tag is the
platform, so each platform's keys are in one Redis Cluster slot):

- ``dlv:{<platform>}:dead``      stream: dead letters (fields ``m`` message JSON, ``stream``, ``entry``,
  ``error``, ``attempts``, ``at``)
- ``dlv:{<platform>}:replay``    stream: dead letters sent again, read like an outbox stream
- ``dlv:{<platform>}:members``   sorted set: live delivery processes, scored by lease expiry (ms)
- ``dlv:{<platform>}:lease:<p>`` string: the process that owns partition ``p`` (with a TTL)

The consumer group ``deliver:<platform>`` is created on every outbox stream (from its start, so that
nothing written before the first delivery process started is missed).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
import time
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from redis.exceptions import RedisError

from service.ops import logs
from service.ops.settings import Settings
from service.platform.doorbell import Doorbell
from service.platform.outbox import Message
from service.store.decoding import as_text
from service.store.groups import Group, Pause, backoff
from service.store.keys import Keys
from service.store.leases import Leases

__all__ = ["Delivery", "DeliveryOptions", "Permanent", "Retry", "addressed_to", "backoff", "recipient_key"]

Handler = Callable[[Message], Awaitable[None]]


class Retry(Exception):
    """Raised by a handler: the message could not be delivered now; try again after ``after_s``
    seconds (``None``: the delivery's own exponential backoff with jitter)."""

    def __init__(self, reason: str = "", after_s: float | None = None) -> None:
        super().__init__(reason)
        self.after_s = after_s


class Permanent(Exception):
    """Raised by a handler: the message can never be delivered as it is (dead-letter it now)."""


def addressed_to(msg: Message, platform: str) -> bool:
    """Whether ``msg`` is for a room or a player of ``platform``."""
    to = msg.to
    return (to.room is not None and to.room.platform == platform) or \
        (to.player is not None and to.player.platform == platform)


def recipient_key(msg: Message) -> str:
    """Who a message goes to, as a string: order is kept per recipient key.  A private chat's
    messages that name the person in it (``Recipient.person``) share that person's key, so that what
    they are told in the chat and what they get as a player keep their order."""
    to = msg.to
    person = to.player or (to.person if to.room is not None and to.room.kind == "private" else None)
    if person is not None:
        return f"player:{person.platform}:{person.user}"
    assert to.room is not None
    return f"room:{to.room.platform}:{to.room.chat}"


@dataclass(frozen=True)
class DeliveryOptions:
    """Tuning of a delivery process (defaults suit production; tests shorten the times)."""

    # Attempts in all (the first one included) before a message is dead-lettered.
    max_attempts: int = 8
    backoff_base_s: float = 0.5
    backoff_cap_s: float = 60.0
    # A Retry-After longer than this is cut to it (a platform asking for an hour holds a chat up).
    max_wait_s: float = 300.0
    # Recipients are hashed over this many lanes per process (concurrent deliveries).
    lanes: int = 64
    # Entries read but not yet finished, per process (back-pressure on reading).
    max_inflight: int = 2048
    partitions: int = 16
    lease_ms: int = 10_000
    block_ms: int = 200
    batch: int = 256
    # On a Redis Cluster: how often every owned outbox is read even if the doorbell did not ring.
    sweep_s: float = 1.0
    # How often this process reads its own pending entries again (a read whose reply was lost).
    reread_s: float = 2.0
    # How often the outbox streams this process acknowledged entries on are trimmed (retention), and
    # how long every entry is kept all the same (a grace period for debugging; 0: off).
    trim_s: float = 5.0
    keep_s: float = 0.0


@dataclass(frozen=True)
class DeadLetter:
    """A message that could not be delivered, as listed by :meth:`Delivery.dead_letters`."""

    id: str
    message: Message | None
    raw: str
    error: str
    attempts: int
    stream: str
    entry: str
    at: float


class DeliveryMetrics:
    """Counters and a histogram of deliveries, labelled by platform."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.deliveries = Counter("cinq_deliveries", "Outbox messages handled, by platform and outcome "
                                  "(delivered, dead, skipped: for another platform)", ["platform", "outcome"],
                                  registry=r)
        self.retries = Counter("cinq_delivery_retries", "Delivery attempts that will be retried",
                               ["platform"], registry=r)
        self.dead = Counter("cinq_delivery_dead_letters", "Messages sent to the dead-letter stream",
                            ["platform"], registry=r)
        self.latency = Histogram("cinq_delivery_seconds", "From the outbox entry written to its delivery",
                                 ["platform"], registry=r,
                                 buckets=(.005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 120))


@dataclass
class DeliveryKeys:
    """The Redis keys and group of one platform's delivery (see the module docstring)."""

    keys: Keys
    platform: str

    @property
    def group(self) -> str:
        """The consumer group on the outbox streams."""
        return f"deliver:{self.platform}"

    def _k(self, suffix: str) -> str:
        return f"{self.keys.prefix}dlv:{{{self.platform}}}:{suffix}"

    @property
    def dead(self) -> str:
        """The dead-letter stream."""
        return self._k("dead")

    @property
    def replay(self) -> str:
        """The stream of dead letters sent again."""
        return self._k("replay")

    @property
    def members(self) -> str:
        """The live delivery processes."""
        return self._k("members")

    def lease(self, partition: int) -> str:
        """The owner of a partition."""
        return self._k(f"lease:{partition}")


@dataclass
class _Item:
    stream: str
    entry: str
    raw: str
    msg: Message


@dataclass
class _Partition:
    streams: list[str]
    inflight: int = 0
    claimed: bool = False


class Delivery:
    """One process's delivery of the outbox to one platform (see the module docstring)."""

    def __init__(self, redis: Any, settings: Settings, platform: str, consumer: str | None = None, *,
                 options: DeliveryOptions | None = None, metrics: DeliveryMetrics | None = None,
                 rng: random.Random | None = None, clock: Callable[[], float] = time.time) -> None:
        self.redis = redis
        self.settings = settings
        self.platform = platform
        self.consumer = consumer or f"d-{secrets.token_hex(4)}"
        self.options = options or DeliveryOptions()
        self.metrics = metrics or DeliveryMetrics()
        self.rng = rng or random.Random()
        self.clock = clock
        self.keys = Keys(settings.buckets, settings.command_shards, settings.key_prefix)
        self.dk = DeliveryKeys(self.keys, platform)
        self.log = logs.get("delivery").bind(platform=platform, consumer=self.consumer)
        self.owned: dict[int, _Partition] = {}
        self.leases = Leases(redis, self.consumer, self.options.partitions, self.dk.members, self.dk.lease,
                             self.options.lease_ms)
        self.group = Group(redis, self.dk.group, self.consumer)
        # Entries read and not finished yet (in a lane): a re-read of pending entries leaves them out.
        self._in_hand: set[tuple[str, str]] = set()
        self._next_reread = time.monotonic() + self.options.reread_s
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

    # -- dead letters -------------------------------------------------------------------------------

    async def dead_letters(self, count: int = 1000) -> list[DeadLetter]:
        """The dead letters of this platform, oldest first."""
        out = []
        for mid, f in await self.redis.xrange(self.dk.dead, count=count):
            fields = {as_text(k): as_text(v) for k, v in f.items()}
            raw = fields.get("m", "")
            try:
                msg: Message | None = Message.model_validate_json(raw)
            except ValueError:
                msg = None
            out.append(DeadLetter(id=as_text(mid), message=msg, raw=raw, error=fields.get("error", ""),
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

    async def _dead_letter(self, it: _Item, error: str, attempts: int) -> None:
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
                await _wait(stop, wait)
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
                    self._next_reread = 0.0
                    wait = pause.failed()
                    self.log.warning("redis_error", error=logs.error_text(e), retry_in=wait)
                    await _wait(stop, wait)
                    with contextlib.suppress(RedisError, OSError):
                        await self.setup()
                except Exception as e:  # a bug must not stop the deliveries: what was read stays pending
                    self._next_reread = 0.0
                    with contextlib.suppress(Exception):
                        self.log.error("delivery_loop_failed", error=logs.error_text(e))
                    await _wait(stop, pause.failed())
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
        if time.monotonic() >= self._next_reread:
            self._next_reread = time.monotonic() + self.options.reread_s
            entries += await self.reread(streams)
        if not entries:
            if not streams:
                await _wait(stop, self.options.block_ms / 1000)
                return
            if self.group.can_block(streams):
                entries = await self.group.read(streams, self.options.batch, self.options.block_ms)
            else:
                entries = await self._read_rung(streams)
        skip: dict[str, list[str]] = {}
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
        if skip:
            pipe = self.redis.pipeline(transaction=False)
            for stream, ids in skip.items():
                pipe.xack(stream, self.dk.group, *ids)
            await pipe.execute()
            self._acked.update(skip)
            self.metrics.deliveries.labels(self.platform, "skipped").inc(sum(map(len, skip.values())))

    async def reread(self, streams: list[str]) -> list[tuple[str, str, Any]]:
        """This process's pending entries of ``streams`` that no lane holds: delivered to it by a read
        whose reply was lost (see the module docstring).  Public so that tests can drive it."""
        # Lanes go on while the read is under way: an entry in hand when it started may be finished
        # (acknowledged, out of the hand) by the time it returns, and is not to be delivered again.
        held = set(self._in_hand)
        got = [e for e in await self.group.own_pending(streams, self.options.batch)
               if (e[0], e[1]) not in held and (e[0], e[1]) not in self._in_hand]
        if got:
            self.log.warning("reread", entries=len(got))
        return got

    async def _trim_due(self) -> None:
        """Retention: trim the streams acknowledged on since the last time, every ``trim_s``."""
        if time.monotonic() < self._next_trim or not self._acked:
            return
        self._next_trim = time.monotonic() + self.options.trim_s
        streams, self._acked = sorted(self._acked), set()
        keep_s = max(self.options.keep_s, self.settings.outbox_keep_s)
        await self.group.trim(streams, keep_ms=int(keep_s * 1000),
                              now_ms=int(self.clock() * 1000))

    async def _read_rung(self, streams: list[str]) -> list[tuple[str, str, Any]]:
        """On a Redis Cluster: sweep every owned outbox now and then, and in between read only those
        the doorbell rang (service.platform.doorbell), plus those that had more than one batch waiting."""
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

    async def _claim(self, part: _Partition) -> list[tuple[str, str, Any]]:
        """Take over every entry pending in the group on a partition just acquired (a previous owner's,
        or this consumer's own from before a restart), oldest first, before reading new ones."""
        out = []
        for s in part.streams:
            out += await self.group.claim(s, 0, self.options.batch, limit=1 << 30)
        if out:
            self.log.warning("claimed", entries=len(out))
        return out

    def _partition_of(self, stream: str) -> _Partition | None:
        for part in self.owned.values():
            if stream in part.streams:
                return part
        return None

    async def _lane(self, q: asyncio.Queue[_Item | None], handler: Handler, stop: asyncio.Event) -> None:
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
                part = self._partition_of(it.stream)
                if part is not None:
                    part.inflight -= 1
                self._room.set()

    async def _deliver(self, it: _Item, handler: Handler, stop: asyncio.Event) -> None:
        o = self.options
        try:
            # The worker leaves the text deferred: it is written here, in the recipient's language.
            msg = it.msg.rendered()
        except Exception as e:  # a message that cannot be rendered never will be: keep it for an operator
            await self._dead_letter(it, f"unrenderable: {type(e).__name__}: {e}", 0)
            return
        attempt = 0
        while True:
            attempt += 1
            try:
                await handler(msg)
            except Permanent as e:
                await self._dead_letter(it, f"permanent: {e}", attempt)
                return
            except Exception as e:  # Retry, or a bug in the handler: both are worth another try
                after = e.after_s if isinstance(e, Retry) else None
                reason = str(e) if isinstance(e, Retry) else f"{type(e).__name__}: {e}"
                if attempt >= o.max_attempts:
                    await self._dead_letter(it, f"gave up after {attempt} attempts: {reason}", attempt)
                    return
                wait = after if after is not None else backoff(attempt, o.backoff_base_s, o.backoff_cap_s,
                                                               self.rng)
                wait = min(max(wait, 0.0), o.max_wait_s)
                self.metrics.retries.labels(self.platform).inc()
                self.log.info("retry", message=it.msg.id, attempt=attempt, wait_s=round(wait, 3),
                              reason=reason[:200])
                if await _wait(stop, wait):
                    return  # stopping: left pending for the next owner
                continue
            await self.redis.xack(it.stream, self.dk.group, it.entry)
            self._acked.add(it.stream)
            self.metrics.deliveries.labels(self.platform, "delivered").inc()
            written_ms = int(it.entry.split("-")[0])
            if it.stream != self.dk.replay:
                self.metrics.latency.labels(self.platform).observe(max(self.clock() - written_ms / 1000, 0.0))
            return

    # -- partitions ---------------------------------------------------------------------------------

    async def rebalance(self) -> None:
        """One round of the partition protocol (:class:`service.store.leases.Leases`): heartbeat, renew
        this process's leases, release the partitions beyond its fair share once nothing of theirs is
        in hand, take free ones up to it.  The loop of :meth:`run` calls it every third of a lease;
        public so that tests can drive it."""
        gained, lost = await self.leases.rebalance(
            int(self.clock() * 1000), busy=lambda p: p in self.owned and self.owned[p].inflight > 0)
        for p in lost:
            self.owned.pop(p, None)
            self.log.info("partition_left", partition=p)
        for p in gained:
            self.owned[p] = _Partition(self.streams_of(p))

    async def _leave(self) -> None:
        await self.leases.leave()
        self.owned.clear()


async def _wait(stop: asyncio.Event, seconds: float) -> bool:
    """Sleep ``seconds`` unless ``stop`` is set first; returns whether it was."""
    if seconds <= 0:
        return stop.is_set()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
    return stop.is_set()

