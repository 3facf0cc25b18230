"""``cinq trim``: archiving finished tables to a file, and removing every key of theirs from Redis.

A finished or cancelled table never changes again, so its events can leave Redis: they are written
to an archive file first (:mod:`service.store.archive`: appended, flushed and fsynced), and only then
is every key of the table deleted:

- its own keys ``t:{b}:<table>:events|snap|done`` and its deadline (a member of ``due:{b}``);
- the derived indexes that point at it: ``room:{p:chat}`` (only if it still shows this table) and
  the table's id in ``player:{p:user}:tables``;
- the platform state of it (``pf:``, see :mod:`service.platform.platform_state`): message slots
  ``pf:{p:chat}:msg:<table>:<slot>`` and their ``dirty`` fields, ``pf:{p:<table>}:chats|names`` and
  the flags ``pf:{p}:once:<what>:<table>:…``.

What outlives a table is kept: a player's ``stats`` and ``prefs``, a group's ``pf:`` ``stats`` and
``counted`` (which stops a redelivered end of match from counting twice, trimmed after 30 days).
The table's share of the outbox ``out:{b}`` is not deleted here: the stream is shared by the bucket's
tables and a delivery group may not have sent those entries yet; the outbox retention trims it.

"""

from __future__ import annotations

import re
import time
from typing import Any

from service.domain.events import decode
from service.domain.tables.state import CANCELLED, FINISHED, Table
from service.store.archive import Archived, write_archive
from service.store.decoding import as_text
from service.store.keys import Keys
from service.store.repository import fold
from service.store.scan import entry_time, event_keys, raw_events
from service.write.projection import touched

# Deletes a room's index only if it still points at the trimmed table (a newer table may own it).
_DEL_IF = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"
# Platform-state keys that belong to a chat or a player and outlive every table: never deleted.
_KEPT_PF = (":stats", ":prefs", ":counted", ":dirty")
_TOKENS = re.compile(r"[:{}]")



async def _pf_keys_of(redis: Any, keys: Keys, tables: set[str]) -> list[str]:
    """The platform-state keys of these tables, by one SCAN of ``pf:`` (their names carry the table id
    as one ``:``/``{}``-separated part; chat- and player-level keys are left alone)."""
    found = []
    async for raw in redis.scan_iter(match=keys.pf_keys(), count=1000):
        key = as_text(raw)
        if key.endswith(_KEPT_PF):
            continue
        if tables.intersection(_TOKENS.split(key[len(keys.prefix):])):
            found.append(key)
    return found


def _dirty_field(key: str, keys: Keys) -> tuple[str, str] | None:
    """``(dirty hash, field)`` of a message slot key ``pf:{p:chat}:msg:<table>:<slot>``."""
    m = re.fullmatch(r"pf:\{([^:}]*):(.*)\}:msg:([^:]+):(.+)", key[len(keys.prefix):])
    if m is None:
        return None
    platform, chat, table, slot = m.groups()
    return keys.pf_dirty(platform), f"{chat}|{table}|{slot}"


async def delete_tables(redis: Any, keys: Keys, tables: list[tuple[str, list[str], Table]]) -> None:
    """Delete every key of these (archived) tables, and their entries in shared keys (module docstring)."""
    pf = await _pf_keys_of(redis, keys, {table_id for table_id, _, _ in tables})
    for table_id, raws, t in tables:
        # What the indexes ever pointed at it from: the index projection's own rooms and seats.
        rooms, players = touched(t, [decode(raw).event for raw in raws])
        # The table's own keys share its bucket's tag: one DEL.  Indexes have tags of their own.
        await redis.delete(keys.events(table_id), keys.snap(table_id), keys.done(table_id))
        pipe = redis.pipeline(transaction=False)
        pipe.zrem(keys.due_for(table_id), table_id)
        for platform, chat in rooms:
            pipe.eval(_DEL_IF, 1, keys.room(platform, chat), table_id)
        for platform, user in players:
            pipe.srem(keys.player_tables(platform, user), table_id)
        await pipe.execute()
    if pf:
        pipe = redis.pipeline(transaction=False)
        for key in pf:
            # One key per DEL: on a Redis Cluster they are in different slots.
            pipe.delete(key)
            dirty = _dirty_field(key, keys)
            if dirty is not None:
                pipe.hdel(*dirty)
        await pipe.execute()


async def sweep_orphans(redis: Any, keys: Keys) -> int:
    """Delete ``done`` sets and snapshots whose table has no event stream; returns how many.

    A command that reaches a table after it was trimmed (a late button press) is refused, and the
    refusal's id is marked in ``t:{b}:<table>:done`` as any refusal's: that would leave a set of a
    table that no longer exists, found by no SCAN of event streams.  (The set of a table being
    created is written in the same script call as its first events, so it is never taken here.)
    """
    found = []
    for kind in ("done", "snap"):
        async for raw in redis.scan_iter(match=keys.table_keys(kind), count=1000):
            found.append(as_text(raw))
    if not found:
        return 0
    pipe = redis.pipeline(transaction=False)
    for key in found:
        pipe.exists(key.rsplit(":", 1)[0] + ":events")
    orphans = [k for k, n in zip(found, await pipe.execute(), strict=True) if not n]
    pipe = redis.pipeline(transaction=False)
    for key in orphans:
        pipe.delete(key)
    await pipe.execute()
    return len(orphans)


async def finished_tables(redis: Any, keys: Keys, cutoff: float) -> list[tuple[str, list[str], Table]]:
    """The finished or cancelled tables whose last event is older than ``cutoff`` (unix seconds), with
    their raw events; lobbies and running matches never.

    The last event of every table is read first (pipelined), so that only the tables idle since before
    ``cutoff`` are read whole: an hourly retention does not load every live table.
    """
    found = await event_keys(redis, keys)
    old = []
    for i in range(0, len(found), 500):
        chunk = found[i:i + 500]
        pipe = redis.pipeline(transaction=False)
        for key, _ in chunk:
            pipe.xrevrange(key, count=1)
        for (_, table_id), last in zip(chunk, await pipe.execute(), strict=True):
            if last and entry_time(last[0][1]) < cutoff:
                old.append(table_id)
    picked = []
    for table_id in old:
        raws = await raw_events(redis, keys.events(table_id))
        t = fold(table_id, None, raws)
        # A finished or cancelled table never changes again: what is read now is what is archived.
        if t is not None and t.status in (FINISHED, CANCELLED):
            picked.append((table_id, raws, t))
    return picked


async def trim(redis: Any, keys: Keys, days: float, archive: str, *, now: float | None = None) -> list[str]:
    """Archive then delete the finished or cancelled tables idle for more than ``days``.

    The archive file has every table's line, fsynced, before any key is deleted; then the keys left
    by late commands to tables trimmed before are swept (:func:`sweep_orphans`).  Returns the ids of
    the tables trimmed.
    """
    now = time.time() if now is None else now
    picked = await finished_tables(redis, keys, now - days * 86_400)
    await sweep_orphans(redis, keys)
    if not picked:
        return []
    write_archive(archive, (Archived(tid, t.status, raws, now) for tid, raws, t in picked))
    await delete_tables(redis, keys, picked)
    return [p[0] for p in picked]
