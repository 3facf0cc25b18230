"""Sharing numbered parts of the work (command shards, outbox partitions) among live processes.

Each part is *leased* to one process at a time: a Redis key holding the owner's name with a TTL,
renewed while the process lives.  Live processes heartbeat in a sorted set scored by their expiry,
and each takes up to its fair share (:func:`fair_share`: the parts split as evenly as possible,
the shares adding up to the number of parts).  A process that dies loses its
leases when they expire, and the others take them over; a process with more than its share releases
the extra parts, but only once nothing read from them is still in hand (``busy``), so two processes
never work on one part at once.  A process takes at once a part whose lease is held under its own
name: that is itself before a restart (a killed container comes back under the same consumer name),
not another process, since two live processes never share a name (their consumer-group entries
would be one pending list); waiting for the lease to expire kept a restarted Telegram bot from
delivering for up to ``lease_ms`` (bench/startup.py).

Keys (the caller names them; both share one hash tag so they live in one Redis Cluster slot):
``members`` (sorted set) and ``lease(p)`` (string) for each part ``p``.

Work done by one process of all at a time (the ratings projector, the tournament director, the
retention run) takes a **single-holder lease** instead, with :func:`hold`: one key, one holder.
"""

from __future__ import annotations

import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from service.store.decoding import as_text

# Renew a lease if it is still ours / release it if it is still ours (never someone else's).
_RENEW = ("if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end "
          "return 0")
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
# Take a single-holder lease if it is free, or keep it if it is ours (never someone else's), in one
# step: a GET then a SET from the client could both see it free.  KEYS: lease.  ARGV: owner, ms.
_HOLD = ("local cur = redis.call('GET', KEYS[1]) "
         "if cur and cur ~= ARGV[1] then return 0 end "
         "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 1")


async def hold(redis: Any, key: str, owner: str, ms: int) -> bool:
    """Take the single-holder lease ``key`` for ``ms`` milliseconds if it is free, or renew it if
    ``owner`` holds it; False if another owner holds it (it changes nothing then)."""
    return bool(await redis.eval(_HOLD, 1, key, owner, ms))


async def release(redis: Any, key: str, owner: str) -> bool:
    """Give up the single-holder lease ``key`` if ``owner`` holds it (never someone else's)."""
    return bool(await redis.eval(_RELEASE, 1, key, owner))


def fair_share(parts: int, live: list[str], owner: str) -> int:
    """How many parts ``owner`` should hold: ``parts`` split as evenly as possible over the ``live``
    processes, the first ones (by name) taking one more; the shares add up to ``parts`` exactly."""
    if owner not in live:
        live = sorted([*live, owner])
    n = len(live)
    return parts // n + (1 if live.index(owner) < parts % n else 0)


@dataclass
class Leases:
    """One process's leases on ``parts`` numbered parts (see the module docstring)."""

    redis: Any
    owner: str
    parts: int
    members: str
    lease: Callable[[int], str]
    lease_ms: int = 10_000
    owned: set[int] = field(default_factory=set)
    # Parts beyond the fair share: not to be read any more, released once not busy.
    draining: set[int] = field(default_factory=set)
    # Parts whose renewal failed in the last round (the lease had expired, or another took it): a
    # process whose leases lapse was held up for most of a lease (its loop, or Redis, stalled).
    lapsed: list[int] = field(default_factory=list)

    async def rebalance(self, now_ms: int, busy: Callable[[int], bool] = lambda p: False
                        ) -> tuple[list[int], list[int]]:
        """One round: heartbeat, renew, release extra parts that are not ``busy``, take free ones up
        to the fair share.  Call it every third of a lease.  Returns the parts (gained, lost)."""
        pipe = self.redis.pipeline(transaction=False)
        pipe.zadd(self.members, {self.owner: now_ms + self.lease_ms})
        pipe.zremrangebyscore(self.members, "-inf", now_ms)
        pipe.zrange(self.members, 0, -1)
        live = sorted(as_text(m) for m in (await pipe.execute())[2])
        share = fair_share(self.parts, live, self.owner)
        gained: list[int] = []
        lost: list[int] = []
        # Renew what is ours, every lease in one round trip (a worker's loop waits for this: one
        # round trip per shard stalled it for milliseconds every few seconds, issue 33's p99); what
        # was lost (it expired, another took it) is dropped at once.
        mine = sorted(self.owned)
        self.lapsed = []
        if mine:
            pipe = self.redis.pipeline(transaction=False)
            for p in mine:
                pipe.eval(_RENEW, 1, self.lease(p), self.owner, self.lease_ms)
            for p, renewed in zip(mine, await pipe.execute(), strict=True):
                if not renewed:
                    self.owned.discard(p)
                    self.draining.discard(p)
                    lost.append(p)
                    self.lapsed.append(p)
        # Release the extra ones (the highest first), once nothing of theirs is in hand.
        extra = sorted(self.owned, reverse=True)[: max(len(self.owned) - share, 0)]
        self.draining = set(extra)
        for p in extra:
            if not busy(p):
                await self.redis.eval(_RELEASE, 1, self.lease(p), self.owner)
                self.owned.discard(p)
                self.draining.discard(p)
                lost.append(p)
        # Take free ones (or this process's own from before a restart) up to the share, starting at a
        # place of this process's own (to spread).
        start = zlib.crc32(self.owner.encode()) % self.parts
        for i in range(self.parts):
            if len(self.owned) >= share:
                break
            p = (start + i) % self.parts
            if p in self.owned:
                continue
            if await self.redis.eval(_HOLD, 1, self.lease(p), self.owner, self.lease_ms):
                self.owned.add(p)
                gained.append(p)
        return gained, lost

    @property
    def active(self) -> list[int]:
        """The parts to read: owned and not draining."""
        return sorted(self.owned - self.draining)

    async def leave(self) -> None:
        """Release every lease and leave the members (a graceful stop)."""
        for p in sorted(self.owned):
            await self.redis.eval(_RELEASE, 1, self.lease(p), self.owner)
        self.owned.clear()
        self.draining.clear()
        await self.redis.zrem(self.members, self.owner)
