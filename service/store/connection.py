"""Where the Redis primary is: one address, a Redis Cluster, or the primary that Redis Sentinel names.

With ``CINQ_REDIS_SENTINELS`` every role asks the sentinels for the primary of
``CINQ_REDIS_SENTINEL_MASTER`` (redis-py's :class:`~redis.asyncio.sentinel.Sentinel`): each new
connection asks again, so after a failover the roles reach the new primary without a restart.  A
connection still open to the old primary, demoted to a replica, gets ``READONLY`` for a write; the
sentinel-managed connection turns that into a :class:`~redis.exceptions.ConnectionError` and drops
itself, and every caller already treats a Redis error as "not yet" (503 + ``Retry-After``, the command
read again), never as an answer to a person.

:func:`unsafe` names the configurations that are refused at start-up: a failover can lose an
acknowledged move unless writes wait for a replica (``service.store.replicas``); a Redis Cluster is
asked once reached (:func:`refuse_unsafe`: replicas that writes do not wait for).
"""

from __future__ import annotations

from typing import Any

from redis.asyncio.connection import parse_url

# The sentinels are asked on every new connection: a dead one must not hold a role up for long.
SENTINEL_TIMEOUT_S = 1.0


def sentinel_address(text: str) -> tuple[str, int]:
    """``"host:port"`` (port 26379 when left out) as a pair."""
    host, _, port = text.strip().rpartition(":")
    if not host:
        return text.strip(), 26379
    return host.strip("[]"), int(port)


def unsafe(settings: Any) -> str | None:
    """Why these Redis settings may lose an acknowledged move (one line), or None."""
    if settings.redis_sentinels and settings.redis_cluster:
        return "CINQ_REDIS_SENTINELS and CINQ_REDIS_CLUSTER are both set: choose one"
    if settings.redis_sentinels and settings.redis_min_replicas < 1:
        return ("CINQ_REDIS_SENTINELS is set but CINQ_REDIS_MIN_REPLICAS is 0: a failover would lose "
                "the moves its new primary had not received; set CINQ_REDIS_MIN_REPLICAS=1 or more")
    if settings.redis_min_replicas > 0 and not (settings.redis_url or settings.redis_sentinels):
        return "CINQ_REDIS_MIN_REPLICAS is set without a Redis (REDIS_URL or CINQ_REDIS_SENTINELS)"
    for s in settings.redis_sentinels:
        try:
            sentinel_address(s)
        except ValueError:
            return f"CINQ_REDIS_SENTINELS: {s!r} is not host:port"
    return None


def cluster_client(url: str, **kw: Any) -> Any:
    """A ``redis.asyncio`` Redis Cluster client for ``url`` that follows a master's failover.

    redis-py (7.x) keeps a node's object across a refresh of its slot map, with the role it had
    then: a replica promoted by a failover stays typed "replica", and every command sent to "all the
    primaries" (``SCRIPT LOAD``, ``SCAN``) then skips the new master, whose scripts were never loaded
    (``NOSCRIPT`` for ever) and whose keys no scan sees.  This client's node list takes each refreshed
    node's role."""
    from redis.asyncio.cluster import NodesManager, RedisCluster

    class FollowingNodes(NodesManager):
        __slots__ = ()  # NodesManager's layout: the object's class can be swapped

        def set_nodes(self, old: dict[str, Any], new: dict[str, Any], remove_old: bool = False) -> None:
            super().set_nodes(old, new, remove_old)
            for name, node in new.items():
                kept = old.get(name)
                if kept is not None and kept is not node:
                    kept.server_type = node.server_type

    client = RedisCluster.from_url(url, **kw)
    client.nodes_manager.__class__ = FollowingNodes  # the same object, with the refresh above
    return client


async def cluster_unsafe(redis: Any, settings: Any) -> str | None:
    """Why this Redis Cluster may lose an acknowledged move (one line), or None: a master with
    replicas, a failover's candidates, that writes do not wait for (``CINQ_REDIS_MIN_REPLICAS`` 0).

    The cluster is asked (``CLUSTER NODES``: the client's own map leaves out replicas that hold no
    data yet); nothing is asked of a client that is not a cluster's or when writes wait already."""
    from redis.asyncio.cluster import RedisCluster

    if not isinstance(redis, RedisCluster) or settings.redis_min_replicas > 0:
        return None
    # {address: {"flags": "myself,master" / "slave" / "slave,fail", ...}}, asked of a primary (a random
    # node may be a replica that hangs).
    nodes = await redis.execute_command("CLUSTER NODES", target_nodes=redis.get_default_node())
    flags = [str(node.get("flags", "")).split(",") for node in nodes.values()]
    replicas = sum(1 for f in flags if "slave" in f and "fail" not in f)
    if not replicas:
        return None
    return (f"the Redis Cluster has {replicas} replica(s) but CINQ_REDIS_MIN_REPLICAS is 0: a master's "
            "failover would lose the moves its replica had not received; set CINQ_REDIS_MIN_REPLICAS=1")


async def refuse_unsafe(redis: Any, settings: Any) -> None:
    """Stop the process with one line (as :func:`service.ops.runtime.connect` does) when the deployment
    it reached is one that may lose an acknowledged move (:func:`cluster_unsafe`)."""
    problem = await cluster_unsafe(redis, settings)
    if problem is not None:
        raise SystemExit(f"cinq: refusing to start: {problem}")


def sentinel_client(settings: Any, **pool: Any) -> Any:
    """A ``redis.asyncio`` client of the primary the sentinels name (see the module docstring).

    The database, user and password come from ``REDIS_URL`` when it is set (its host is ignored);
    the sentinels are reached with the same user and password."""
    from redis.asyncio.sentinel import Sentinel

    creds: dict[str, Any] = {}
    if settings.redis_url:
        parsed = parse_url(settings.redis_url)
        creds = {k: parsed[k] for k in ("db", "username", "password") if parsed.get(k) is not None}
    auth = {k: v for k, v in creds.items() if k in ("username", "password")}
    sentinel = Sentinel([sentinel_address(s) for s in settings.redis_sentinels],  # type: ignore[no-untyped-call]
                        sentinel_kwargs={"socket_timeout": SENTINEL_TIMEOUT_S,
                                         "socket_connect_timeout": SENTINEL_TIMEOUT_S, **auth})
    return sentinel.master_for(settings.redis_sentinel_master, **creds, **pool)
