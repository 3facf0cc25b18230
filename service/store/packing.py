"""Packing commands with hiredis (C) instead of redis-py's Python packer, on the worker's hot path.

redis.asyncio packs every argument of every command in Python (an encode, a length, a join per
argument): for the worker's pipelines of compare-and-appends, with a dozen or more arguments each,
that was ~10% of its CPU per command.  The synchronous client already packs with hiredis when it is
installed; :func:`use_hiredis_packing` does the same for an asyncio client, on its pool's future
connections and on those it already holds.  The bytes on the wire are the same.  A client of any
other kind (fakeredis, a cluster client) or no hiredis: nothing changes.
"""

from __future__ import annotations

from typing import Any

from redis.asyncio.connection import Connection, SSLConnection, UnixDomainSocketConnection
from redis.exceptions import DataError

try:
    import hiredis
except ImportError:  # pragma: no cover - hiredis is a dependency, but the fallback is harmless
    hiredis = None  # type: ignore[assignment]

_FAST: dict[type, type] = {}


class _HiredisPacking:
    """Mixin: ``pack_command`` by hiredis (``pack_commands`` of the base class calls it)."""

    __slots__ = ()

    def pack_command(self, *args: Any) -> list[bytes]:
        # As redis-py does: a command name with spaces ("CONFIG GET") is several arguments.
        if isinstance(args[0], str):
            args = (*args[0].encode().split(), *args[1:])
        elif b" " in args[0]:
            args = (*args[0].split(), *args[1:])
        try:
            return [hiredis.pack_command(args)]
        except TypeError as e:  # what redis-py's encoder raises for a bad argument
            raise DataError(str(e)) from None


def _fast(cls: type) -> type | None:
    if cls not in (Connection, SSLConnection, UnixDomainSocketConnection):
        return cls if cls in _FAST.values() else None
    if cls not in _FAST:
        _FAST[cls] = type(f"Hiredis{cls.__name__}", (_HiredisPacking, cls), {"__slots__": ()})
    return _FAST[cls]


def use_hiredis_packing(client: Any) -> bool:
    """Make ``client`` (a ``redis.asyncio.Redis``) pack commands with hiredis; True if it does."""
    pool = getattr(client, "connection_pool", None)
    if hiredis is None or pool is None or not hasattr(hiredis, "pack_command"):
        return False
    fast = _fast(pool.connection_class)
    if fast is None:
        return False
    pool.connection_class = fast
    for conn in [*getattr(pool, "_available_connections", ()), *getattr(pool, "_in_use_connections", ())]:
        new = _fast(type(conn))
        if new is not None and type(conn) is not new:
            conn.__class__ = new
    return True
