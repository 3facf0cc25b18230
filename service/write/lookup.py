"""Which table a person plays at, from the derived indexes and the tables' last events."""

from __future__ import annotations

from typing import Any

import orjson

from service.domain.events import envelope
from service.domain.identities import Player
from service.store.decoding import as_text
from service.store.keys import Keys

# The events after which a table's match runs (also PlayerKicked with a level: an AI took the seat).
_RUNNING_AFTER = frozenset({"MatchStarted", "MovePlayed", "SeatTakenByBot"})


async def playing(redis: Any, keys: Keys, user: Player) -> str | None:
    """The table a person plays at: of their tables (derived index) the running one, the most
    recently active if several (the last event of each stream tells both); None if none runs."""
    raw = await redis.smembers(keys.player_tables(user.platform, user.user))
    tables = sorted(as_text(t) for t in raw)
    if not tables:
        return None
    pipe = redis.pipeline(transaction=False)
    for t in tables:
        pipe.xrevrange(keys.events(t), count=1)
    best: tuple[float, str] | None = None
    for t, last in zip(tables, await pipe.execute(), strict=True):
        if not last:
            continue
        fields = last[0][1]
        env = envelope(orjson.loads(fields.get(b"e") or fields.get("e") or b"{}"))
        running = env.get("type") in _RUNNING_AFTER or (
            env.get("type") == "PlayerKicked" and (env.get("data") or {}).get("level"))
        if running and (best is None or env.get("at", 0.0) >= best[0]):
            best = (float(env.get("at", 0.0)), t)
    return best[1] if best else None
