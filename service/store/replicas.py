"""Acknowledge only what a failover keeps: wait for the replicas before an acknowledgement.

Redis replicates asynchronously: a primary answers a write before any replica has it, and a failover
to a replica that had not received it loses it (with no error anywhere).  So every place that tells
someone "done" — the gateway before an adapter answers 202 or confirms a Telegram update, the worker
before it acknowledges a command, a delivery before it hands a message to a platform — first asks
the primary to wait until ``needed`` replicas have everything written so far (``WAIT``; ``WAITAOF``
where the server has it and its AOF is on: written *and fsynced* there), for at most ``timeout_ms``.
Too few in time raises :class:`NotReplicated`, a :class:`redis.exceptions.RedisError`, which every
caller already treats as "not yet": the webhook answers 503 with ``Retry-After``, the worker leaves the
command pending and reads it again, a delivery sends nothing and reads again.

``WAIT`` counts what *this connection* wrote.  A caller that only read (a delivery, a duplicate the
append script recognised) wrote nothing, yet what it read may be a write of another client that no
replica has yet; so each confirmation first writes one tiny key (:meth:`Keys.sync`) on the same
connection: Redis is single-threaded, so that write comes after everything the caller saw, and a
replica that has it has all of that too.  On a Redis Cluster every primary that serves a slot in the
client's map is confirmed, each on its own connection (a sync key whose slot it serves, then its
``WAIT``), in the caller's pipeline; a primary that serves none holds none of the writes.

With ``needed`` 0 (one Redis, no replica: the default) nothing is sent and nothing is waited for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from redis.asyncio.cluster import RedisCluster
from redis.exceptions import RedisError

from service.store.keys import Keys


class NotReplicated(RedisError):
    """Fewer replicas than needed confirmed the writes in time: nothing may be acknowledged yet."""


@dataclass(frozen=True)
class Mark:
    """Where a confirmation sits in a caller's pipeline: ``count`` replies from ``start``."""

    start: int
    count: int


NONE = Mark(0, 0)


class Replicas:
    """The wait for replicas of one process's Redis client (see the module docstring)."""

    def __init__(self, redis: Any, keys: Keys, needed: int = 0, timeout_ms: int = 1000,
                 aof: bool = True) -> None:
        self.redis = redis
        self.keys = keys
        self.needed = needed
        self.timeout_ms = timeout_ms
        self.aof = aof
        self.cluster = isinstance(redis, RedisCluster)
        # WAITAOF's local count (1: this server's AOF is on), or None: WAIT (decided by ready()).
        self._aof_local: int | None = None
        self._decided = False
        self._node_keys: dict[str, str] = {}

    @classmethod
    def of(cls, redis: Any, settings: Any, keys: Keys) -> Replicas:
        """From the settings (``CINQ_REDIS_MIN_REPLICAS``, ``..._REPLICA_TIMEOUT_MS``, ``..._WAITAOF``)
        and the roles' one key layout."""
        return cls(redis, keys, settings.redis_min_replicas,
                   settings.redis_replica_timeout_ms, settings.redis_waitaof)

    @property
    def on(self) -> bool:
        """Whether acknowledgements wait for replicas at all."""
        return self.needed > 0

    async def _decide_aof(self) -> None:
        """WAITAOF where the server has it (Redis 7.2+) and, for the local count, its AOF is on."""
        self._decided = True
        self._aof_local = None
        if not self.aof:
            return
        # A primary: a random node may be a replica, and one that hangs would hang this call.
        node = self.redis.get_default_node() if self.cluster else None
        kw = {"target_nodes": node} if node is not None else {}
        info = await self.redis.execute_command("INFO", "server", **kw)
        version = info.get("redis_version", "0") if isinstance(info, dict) else "0"
        major_minor = tuple(int(x) for x in str(version).split(".")[:2])
        if major_minor >= (7, 2):
            pers = await self.redis.execute_command("INFO", "persistence", **kw)
            self._aof_local = 1 if isinstance(pers, dict) and int(pers.get("aof_enabled", 0)) else 0

    def _sync_key(self, node: Any) -> str | None:
        """A sync key that ``node`` (a cluster primary) serves, or None when the client's slot map
        gives it no slot: nothing of ours is written there.  After a failover the client may still
        list the old primary among its primaries while its slot map already sends every slot to the
        promoted replica (redis-py moves a slot on MOVED and re-reads the roles only on a full
        refresh); no key then maps to it, and raising here, before anything is sent, kept a worker
        from ever reaching the error that refreshes the map (CI's cluster failover run: 104
        acknowledged commands never acted on)."""
        key = self._node_keys.get(node.name)
        if key is not None and self.redis.get_node_from_key(key) is node:
            return key
        if not any(owners and owners[0].name == node.name
                   for owners in self.redis.nodes_manager.slots_cache.values()):
            return None
        for i in range(100_000):
            candidate = self.keys.sync(str(i))
            owner = self.redis.get_node_from_key(candidate)
            self._node_keys.setdefault(owner.name, candidate)
            if owner.name == node.name:
                return candidate
        raise RedisError(f"no sync key found for the cluster node {node.name}")

    def queue(self, pipe: Any) -> Mark:
        """Queue the confirmation of everything written so far at the end of ``pipe``; pass the
        pipeline's replies and the mark to :meth:`check`.  Nothing is queued when off; before
        :meth:`ready` has learnt whether the server has ``WAITAOF``, ``WAIT`` is used."""
        if not self.on:
            return NONE
        start = len(pipe)
        wait = self._wait_args()
        if self.cluster:
            for node in self.redis.get_primaries():
                key = self._sync_key(node)
                if key is None:  # it serves no slot: none of the writes are there
                    continue
                pipe.execute_command("SET", key, "1")
                pipe.execute_command(*wait, target_nodes=node)
        else:
            pipe.execute_command("SET", self.keys.sync(), "1")
            pipe.execute_command(*wait)
        return Mark(start, len(pipe) - start)

    def _wait_args(self) -> tuple[Any, ...]:
        if self._aof_local is None:
            return ("WAIT", self.needed, self.timeout_ms)
        return ("WAITAOF", self._aof_local, self.needed, self.timeout_ms)

    def check(self, mark: Mark, replies: list[Any]) -> None:
        """Raise :class:`NotReplicated` unless every wait of ``mark`` reached ``needed`` replicas."""
        mine = replies[mark.start:mark.start + mark.count]
        for reply in mine:
            if isinstance(reply, Exception):
                raise reply
        for reply in mine[1::2]:
            if isinstance(reply, list | tuple):  # WAITAOF: [fsynced here (0/1), replicas that fsynced]
                local, got = int(reply[0]), int(reply[-1])
                if local < (self._aof_local or 0):
                    raise NotReplicated(f"the primary did not fsync its AOF within {self.timeout_ms} ms")
            else:
                got = int(reply)
            if got < self.needed:
                raise NotReplicated(f"only {got} of {self.needed} replicas confirmed the write within "
                                    f"{self.timeout_ms} ms")

    async def ready(self) -> None:
        """Learn which wait the server has (once, when on)."""
        if self.on and not self._decided:
            await self._decide_aof()

    async def confirm(self) -> None:
        """Wait (bounded) until ``needed`` replicas have everything this process wrote or read so
        far; raises :class:`NotReplicated` if they did not in time.  A no-op when off."""
        if not self.on:
            return
        await self.ready()
        pipe = self.redis.pipeline(transaction=False)
        mark = self.queue(pipe)
        self.check(mark, await pipe.execute(raise_on_error=False))

    def describe(self) -> str:
        """What is waited for, in words (logs and readiness)."""
        if not self.on:
            return "no replica wait"
        how = "WAIT" if self._aof_local is None else "WAITAOF"
        return f"{how} for {self.needed} replica(s), at most {self.timeout_ms} ms"

