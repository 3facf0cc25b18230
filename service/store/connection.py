"""Where the Redis primary is: one address, a Redis Cluster, or the primary that Redis Sentinel names.

With ``CINQ_REDIS_SENTINELS`` every role asks the sentinels for the primary of
``CINQ_REDIS_SENTINEL_MASTER`` (redis-py's :class:`~redis.asyncio.sentinel.Sentinel`): each new
connection asks again, so after a failover the roles reach the new primary without a restart.  A
connection still open to the old primary, demoted to a replica, gets ``READONLY`` for a write; the
sentinel-managed connection turns that into a :class:`~redis.exceptions.ConnectionError` and drops
itself, and every caller already treats a Redis error as "not yet" (503 + ``Retry-After``, the command
read again), never as an answer to a person.

:func:`unsafe` names the configurations that are refused at start-up: a failover can lose an
acknowledged move unless writes wait for a replica (``service.store.replicas``).  Once reached, the
deployment itself is asked (:func:`refuse_unsafe`): a Redis Cluster's masters and the sentinels'
primary must not have more replicas than writes wait for (:func:`too_few_waited`: a failover of a
primary that is still alive loses what it acknowledged with a replica that was not promoted).
"""

from __future__ import annotations

from typing import Any

from redis.asyncio.connection import parse_url
from redis.exceptions import RedisError

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
    replicas, a failover's candidates, that writes do not wait for (``CINQ_REDIS_MIN_REPLICAS`` 0), or
    with more replicas than writes wait for (:func:`too_few_waited`).

    The cluster is asked (``CLUSTER NODES``: the client's own map leaves out replicas that hold no
    data yet); nothing is asked of a client that is not a cluster's."""
    from redis.asyncio.cluster import RedisCluster

    if not isinstance(redis, RedisCluster):
        return None
    # {address: {"flags": "myself,master" / "slave" / "slave,fail", "master_id": ...}}, asked of a
    # primary (a random node may be a replica that hangs).
    nodes = await redis.execute_command("CLUSTER NODES", target_nodes=redis.get_default_node())
    per_master = replicas_per_master(nodes)
    replicas = sum(per_master.values())
    if not replicas:
        return None
    if settings.redis_min_replicas == 0:
        return (f"the Redis Cluster has {replicas} replica(s) but CINQ_REDIS_MIN_REPLICAS is 0: a master's "
                "failover would lose the moves its replica had not received; set CINQ_REDIS_MIN_REPLICAS="
                f"{max(per_master.values())}")
    return too_few_waited("a Redis Cluster master", max(per_master.values()), settings)


def replicas_per_master(nodes: dict[str, dict[str, Any]]) -> dict[str, int]:
    """From redis-py's parsed ``CLUSTER NODES`` (``{address: {"flags": ..., "master_id": ...}}``), how
    many replicas not marked failed each master id has."""
    per_master: dict[str, int] = {}
    for node in nodes.values():
        flags = str(node.get("flags", "")).split(",")
        if "slave" in flags and "fail" not in flags:
            master = str(node.get("master_id", ""))
            per_master[master] = per_master.get(master, 0) + 1
    return per_master


def too_few_waited(who: str, replicas: int, settings: Any) -> str | None:
    """Why waiting for ``CINQ_REDIS_MIN_REPLICAS`` of ``who``'s ``replicas`` may lose a move, or None.

    A failover of a primary that is still alive (sentinels that wrongly judge it down, an operator's
    ``SENTINEL FAILOVER``) promotes one replica while the old primary keeps its clients, and the
    replicas not promoted, for a moment: with fewer waited for than it has replicas, it goes on
    acknowledging moves that one of those confirms and the new primary never gets (measured by
    ``bench/false_failover.py``: ``bench/results/failover.txt``).  Waiting for every replica makes the
    promoted one a replica that every acknowledged move reached."""
    if replicas <= settings.redis_min_replicas:
        return None
    return (f"{who} has {replicas} replicas but CINQ_REDIS_MIN_REPLICAS is {settings.redis_min_replicas}: "
            "a failover of a primary that is still alive would lose the moves it acknowledged meanwhile "
            f"with a replica that was not promoted; set CINQ_REDIS_MIN_REPLICAS={replicas} (every replica)")


async def sentinel_unsafe(settings: Any) -> str | None:
    """Why the primary the sentinels name may lose an acknowledged move (one line), or None: it has
    more replicas than writes wait for (:func:`too_few_waited`).  Every replica the sentinels know
    counts, those they see down too: one that comes back may be promoted (a replica gone for good is
    forgotten with ``SENTINEL RESET``).  Nothing is asked without ``CINQ_REDIS_SENTINELS``; no
    sentinel that answers is not a reason to refuse (the roles wait for the store as they always do)."""
    if not settings.redis_sentinels:
        return None
    sentinel = _sentinels(settings)
    try:
        for s in sentinel.sentinels:
            try:
                listed = await s.sentinel_slaves(settings.redis_sentinel_master)
            except RedisError:
                continue
            return too_few_waited("the primary the sentinels name", len(listed), settings)
        return None
    finally:
        for s in sentinel.sentinels:
            await s.aclose()


async def refuse_unsafe(redis: Any, settings: Any) -> None:
    """Stop the process with one line (as :func:`service.ops.runtime.connect` does) when the deployment
    it reached is one that may lose an acknowledged move (:func:`cluster_unsafe`,
    :func:`sentinel_unsafe`)."""
    problem = await cluster_unsafe(redis, settings) or await sentinel_unsafe(settings)
    if problem is not None:
        raise SystemExit(f"cinq: refusing to start: {problem}")


def _creds(settings: Any) -> dict[str, Any]:
    """The database, user and password of ``REDIS_URL`` (its host is ignored), when it is set."""
    if not settings.redis_url:
        return {}
    parsed = parse_url(settings.redis_url)
    return {k: parsed[k] for k in ("db", "username", "password") if parsed.get(k) is not None}


def _sentinels(settings: Any) -> Any:
    """redis-py's :class:`~redis.asyncio.sentinel.Sentinel` of ``CINQ_REDIS_SENTINELS``, reached with
    ``REDIS_URL``'s user and password and a short timeout."""
    from redis.asyncio.sentinel import Sentinel

    auth = {k: v for k, v in _creds(settings).items() if k in ("username", "password")}
    return Sentinel([sentinel_address(s) for s in settings.redis_sentinels],  # type: ignore[no-untyped-call]
                    sentinel_kwargs={"socket_timeout": SENTINEL_TIMEOUT_S,
                                     "socket_connect_timeout": SENTINEL_TIMEOUT_S, **auth})


def sentinel_client(settings: Any, **pool: Any) -> Any:
    """A ``redis.asyncio`` client of the primary the sentinels name (see the module docstring).

    The database, user and password come from ``REDIS_URL`` when it is set (its host is ignored);
    the sentinels are reached with the same user and password."""
    return _sentinels(settings).master_for(settings.redis_sentinel_master, **_creds(settings), **pool)
