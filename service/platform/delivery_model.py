"""What a delivery is made of, apart from its loop: the handler's contract (:class:`Retry`,
:class:`Permanent`), who a message is for (:func:`addressed_to`, :func:`recipient_key`), the tuning,
the metrics and the Redis keys of one platform's delivery (:mod:`service.platform.delivery`).

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
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from prometheus_client import CollectorRegistry, Counter, Histogram

from service.platform.outbox import Message
from service.store.keys import Keys

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

    @property
    def dead(self) -> str:
        """The dead-letter stream."""
        return self.keys.delivery_dead(self.platform)

    @property
    def replay(self) -> str:
        """The stream of dead letters sent again."""
        return self.keys.delivery_replay(self.platform)

    @property
    def members(self) -> str:
        """The live delivery processes."""
        return self.keys.delivery_members(self.platform)

    def lease(self, partition: int) -> str:
        """The owner of a partition."""
        return self.keys.delivery_lease(self.platform, partition)


@dataclass
class _Item:
    stream: str
    entry: str
    raw: str
    msg: Message


async def wait_or_stop(stop: asyncio.Event, seconds: float) -> bool:
    """Sleep ``seconds`` unless ``stop`` is set first; returns whether it was."""
    if seconds <= 0:
        return stop.is_set()
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)
    return stop.is_set()

