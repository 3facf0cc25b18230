"""Where the Redis primary is: one address, a Redis Cluster, or the primary that Redis Sentinel names.

With ``CINQ_REDIS_SENTINELS`` every role asks the sentinels for the primary of
``CINQ_REDIS_SENTINEL_MASTER`` (redis-py's :class:`~redis.asyncio.sentinel.Sentinel`): each new
connection asks again, so after a failover the roles reach the new primary without a restart.  A
connection still open to the old primary, demoted to a replica, gets ``READONLY`` for a write; the
sentinel-managed connection turns that into a :class:`~redis.exceptions.ConnectionError` and drops
itself, and every caller already treats a Redis error as "not yet" (503 + ``Retry-After``, the command
read again), never as an answer to a person.

:func:`unsafe` names the configurations that are refused at start-up: a failover can lose an
acknowledged move unless writes wait for a replica (``service.store.replicas``).
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
