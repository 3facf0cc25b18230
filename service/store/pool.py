"""Every role's Redis connections come from one bounded pool per client (issue 32, 5).

redis-py's default pool opens a connection for every command in flight and keeps it for ever: 800
concurrent unauthenticated ``GET /readyz`` took Redis from 9 to 806 clients, and every role shares
Redis's ``maxclients``.  Here a client holds at most ``CINQ_REDIS_MAX_CONNECTIONS``; a command that
finds them all busy waits up to ``CINQ_REDIS_POOL_TIMEOUT_S`` for one, then fails with redis-py's
``ConnectionError`` ("No connection available."), which every caller already treats as Redis being
away for a moment (a 503 and ``Retry-After``, a command read again).  Connections left idle for
:data:`IDLE_S` beyond the first :data:`KEEP_IDLE` are closed, so that a burst's connections do not
stay open after it.

A Redis Cluster client bounds each node's connections the same way (redis-py raises
``MaxConnectionsError``, a ``ConnectionError``, at once instead of waiting).
"""

from __future__ import annotations

import time
from typing import Any

from redis.asyncio.connection import AbstractConnection, BlockingConnectionPool
from redis.asyncio.sentinel import SentinelConnectionPool

KEEP_IDLE = 4
"""Idle connections a pool keeps open however long they wait (a role's steady work needs a few)."""
IDLE_S = 30.0
"""An idle connection beyond :data:`KEEP_IDLE` is closed once unused this long."""
_SWEEP_S = 1.0


class _Shrinking:
    """Closes connections idle longer than :data:`IDLE_S`, beyond :data:`KEEP_IDLE`, looking at most
    once a second, when a connection comes back (a pool in use sees releases all the time)."""

    _next_sweep = 0.0

    async def release(self, connection: AbstractConnection) -> None:
        connection._cinq_idle_since = time.monotonic()  # type: ignore[attr-defined]
        await super().release(connection)  # type: ignore[misc]
        now = time.monotonic()
        if now < self._next_sweep:
            return
        self._next_sweep = now + _SWEEP_S
        open_idle = [c for c in self._available_connections  # type: ignore[attr-defined]
                     if c.is_connected]
        for c in open_idle[:-KEEP_IDLE]:  # the most recently used stay open
            if now - getattr(c, "_cinq_idle_since", now) > IDLE_S:
                await c.disconnect()  # reconnects by itself if taken again


class BoundedPool(_Shrinking, BlockingConnectionPool):
    """A blocking pool of at most ``max_connections``, waiting ``timeout`` s for a free one."""


class BoundedSentinelPool(_Shrinking, SentinelConnectionPool, BlockingConnectionPool):
    """The same, for the primary the sentinels name (each new connection asks them)."""


def pool_args(settings: Any) -> dict[str, Any]:
    """The bound of a client's pool from the settings (``max_connections``, ``timeout``)."""
    return {"max_connections": settings.redis_max_connections, "timeout": settings.redis_pool_timeout_s}


def bounded_client(url: str, settings: Any) -> Any:
    """A ``redis.asyncio`` client of ``url`` on a :class:`BoundedPool`."""
    import redis.asyncio as redis

    pool = BoundedPool.from_url(url, **pool_args(settings))
    return redis.Redis(connection_pool=pool)
