"""Every table in Redis, found by SCAN: the one listing that ``cinq tables``, ``cinq stats`` and
``cinq trim`` share (no index of all tables exists; SCAN never blocks the server).

A table is listed as the worker loads it (the latest snapshot and the events after it, by the load
script) plus its last entry for its time, so a long table costs a few events, not its whole stream.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import orjson

from service.domain.tables.state import Table
from service.store.decoding import as_text
from service.store.event_store import EventStore
from service.store.keys import Keys
from service.store.repository import fold, from_loaded


@dataclass(frozen=True)
class TableInfo:
    """One line of ``cinq tables``: a table as its events say it is now."""

    id: str
    game: str
    phase: str
    players: list[str]
    version: int
    last_activity: float


def seat_name(seat: Any) -> str:
    """How the operator's listings name a seat: the person's name (or platform:user), AI(level) or -."""
    if seat.player is not None and seat.bot is None:
        return seat.player.name or f"{seat.player.platform}:{seat.player.user}"
    return f"AI({seat.bot})" if seat.bot else "-"


def entry_time(fields: Any) -> float:
    """The ``at`` of a raw event-stream entry's fields (0 when it has none)."""
    raw = fields.get(b"e") or fields.get("e")
    return float(orjson.loads(raw).get("at", 0.0)) if raw else 0.0


async def event_keys(redis: Any, keys: Keys) -> list[tuple[str, str]]:
    """(stream key, table id) of every table, by SCAN, in table id order."""
    out = []
    # Every table's stream is "<prefix>t:{<bucket>}:<table>:events".
    async for raw in redis.scan_iter(match=keys.table_keys("events"), count=1000):
        key = as_text(raw)
        out.append((key, key.rsplit(":", 2)[-2]))
    return sorted(out, key=lambda kt: kt[1])


async def raw_events(redis: Any, key: str) -> list[str]:
    """Every event of one table's stream, as stored (JSON text), in order."""
    return [as_text(f[b"e"] if b"e" in f else f["e"]) for _, f in await redis.xrange(key)]


async def last_activity(redis: Any, key: str) -> float | None:
    """The time of a table's last event (unix seconds), None for an empty or missing stream."""
    last = await redis.xrevrange(key, count=1)
    return entry_time(last[0][1]) if last else None


def info_of(table_id: str, raws: list[str]) -> tuple[TableInfo, Table] | None:
    """A table's listing line and state, folded from all its raw events (None: no table)."""
    t = fold(table_id, None, raws)
    if t is None:
        return None
    last = float(orjson.loads(raws[-1]).get("at", 0.0))
    return TableInfo(t.id or table_id, t.game, t.status, [seat_name(s) for s in t.seats],
                     len(raws), last), t


async def summaries(redis: Any, keys: Keys) -> list[tuple[TableInfo, Table]]:
    """Every table with at least one event, as of now (see the module docstring)."""
    store = EventStore(redis, keys)
    out = []
    for key, table_id in await event_keys(redis, keys):
        loaded = await store.load(table_id)
        t = from_loaded(table_id, loaded)
        at = await last_activity(redis, key)
        if t is None or at is None:
            continue
        out.append((TableInfo(t.id or table_id, t.game, t.status, [seat_name(s) for s in t.seats],
                              loaded.version, at), t))
    return out


async def list_tables(redis: Any, keys: Keys) -> list[TableInfo]:
    """Every table with at least one event: id, game, phase, players, version, last activity."""
    return [info for info, _ in await summaries(redis, keys)]
