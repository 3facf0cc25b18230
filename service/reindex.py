"""Rebuild the derived indexes (room -> table, player -> tables, stats) from the event streams.

The streams are the source of truth; these indexes are written after each append and can be lost
(a crash between the append and the index write, a flushed key).  ``cinq reindex`` replays every
table's events and writes them again.
"""

from __future__ import annotations

from typing import Any

from service.events import PlayerKicked, RoomAttached, TableCreated, decode
from service.keys import Keys
from service.tables.repository import fold
from service.tables.state import FINISHED, LOBBY, RUNNING


async def reindex(redis: Any, keys: Keys) -> int:
    """Rewrite every derived index from the streams; returns the number of tables seen.

    Rooms point to the table most recently created or attached in them; stats count finished matches.
    """
    rooms: dict[tuple[str, str], tuple[float, str]] = {}
    tables: dict[tuple[str, str], set[str]] = {}
    stats: dict[tuple[str, str], dict[str, int]] = {}
    n = 0
    async for raw_key in redis.scan_iter(match=f"{keys.prefix}t:*:events", count=1000):
        key = raw_key.decode() if isinstance(raw_key, bytes) else raw_key
        table_id = key.rsplit(":", 2)[-2]
        raws = [f[b"e"] for _, f in await redis.xrange(key)]
        t = fold(table_id, None, [r.decode() for r in raws])
        if t is None:
            continue
        n += 1
        kicked: set[tuple[str, str]] = set()  # people whose seat an AI player took by /kick
        for raw in raws:
            s = decode(raw)
            if isinstance(s.event, PlayerKicked) and s.event.level and s.event.player is not None:
                kicked.add((s.event.player.platform, s.event.player.user))
            if isinstance(s.event, TableCreated | RoomAttached):
                r = s.event.room
                if rooms.get((r.platform, r.chat), (-1.0, ""))[0] <= s.at:
                    rooms[(r.platform, r.chat)] = (s.at, table_id)
        winners = set(t.result.get("winners", [])) if t.result else set()
        for i, seat in enumerate(t.seats):
            if seat.player is None:
                continue
            who = (seat.player.platform, seat.player.user)
            if t.status in (LOBBY, RUNNING) and who not in kicked:
                tables.setdefault(who, set()).add(table_id)
            if t.status == FINISHED:
                st = stats.setdefault(who, {"played": 0, "won": 0})
                st["played"] += 1
                st["won"] += i in winners
    pipe = redis.pipeline(transaction=False)
    for (platform, chat), (_, table_id) in rooms.items():
        pipe.set(keys.room(platform, chat), table_id)
    for (platform, user), ts in tables.items():
        pipe.delete(keys.player_tables(platform, user))
        pipe.sadd(keys.player_tables(platform, user), *ts)
    for (platform, user), st in stats.items():
        pipe.hset(keys.player_stats(platform, user), mapping=st)
    await pipe.execute()
    return n
