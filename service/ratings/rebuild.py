"""``cinq ratings rebuild``: the ratings folded again from nothing, from the event streams and archives.

Every finished match is found (the tables still in Redis, and the archive files ``cinq trim`` and the
retention wrote), turned into its record by the same :func:`~service.ratings.model.record_of` the
worker uses, and rated in the order the matches finished (their ``MatchFinished`` time, then table
id); then every ratings key is replaced, in one MULTI, by the fold's.  A table both in Redis and in
an archive counts once.  What is still queued is left alone: those matches are marked done by the
rebuild, so the projector acknowledges them without effect.

Seats and results are all a record needs, so the moves (the bulk of a stream) are left out by a
script on the server and never cross the network.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import orjson

from service.domain.events import MatchFinished, TableCreated, decode_envelope
from service.domain.tables.state import Table, evolve
from service.ratings.model import MatchRecord, Rating, rate, record_of
from service.ratings.store import MONTH_TTL_S, WEEK_TTL_S, encode_rating, month, week
from service.store.archive import load_archive
from service.store.decoding import as_text
from service.store.keys import Keys

_MOVE = b'{"type":"MovePlayed"'
_COMPACT_MOVE = b'{"M":'  # a move as written since issue 33 (service.domain.events.encode)
# Several tables' events but their moves (most of a stream), filtered where they are.  KEYS: event
# streams of one hash slot.  Returns one list per key.  Entries are XADDed with the one field "e"
# (append.lua); a move's JSON starts '{"M":' (byte 3 "M": every other event starts '{"type"') or,
# written before that, '{"type":"Mo' (bytes 10-11 "Mo": no other event's name does), tested without
# making a string of each.
_NOT_MOVES = """
local out = {}
for k, key in ipairs(KEYS) do
  local kept = {}
  for _, e in ipairs(redis.call('XRANGE', key, '-', '+')) do
    local v = e[2][2]
    local a, b = string.byte(v, 10, 11)
    if string.byte(v, 3) ~= 77 and (a ~= 77 or b ~= 111) then kept[#kept + 1] = v end
  end
  out[k] = kept
end
return out
"""
STREAMS_PER_CALL = 100
CALLS_PER_TRIP = 20
# Not a seat's change: the deal (folding it would make the engine's state, which a record never needs).
_DEAL = b'{"type":"MatchStarted"'


def record_from_events(table_id: str, raws: Iterable[str | bytes]) -> MatchRecord | None:
    """The record of a table's finished match (None: not finished), from its seats alone.

    The seats are the table fold's own (:func:`service.domain.tables.state.evolve`: joins, leaves,
    AI players, take-overs, kicks), and the record the worker's (:func:`record_of`); the fold skips
    the moves and the deal, so no engine state is made (which is most of a fold's time)."""
    t: Table | None = None
    for raw in raws:
        b = raw if isinstance(raw, bytes) else raw.encode()
        if b.startswith(_COMPACT_MOVE) or b.startswith(_MOVE) or b.startswith(_DEAL):
            continue
        s = decode_envelope(orjson.loads(b))
        if t is None and not isinstance(s.event, TableCreated):
            return None  # the stream's start is gone: no table to fold
        if isinstance(s.event, MatchFinished) and t is not None:
            return record_of(t, s.event.result, float(s.at))
        t = evolve(t, s.event, table_id=table_id, at=s.at)
    return None


@dataclass
class Fold:
    """Every rating, as the projector would have left it after the same matches in the same order."""

    ratings: dict[str, dict[str, Rating]] = field(default_factory=dict)  # game -> person -> rating
    groups: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (group, game) -> people
    windows: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)  # (game, period) -> gains
    done: set[str] = field(default_factory=set)
    seconds: dict[str, float] = field(default_factory=dict)  # time per phase: read, rate, write

    def add(self, rec: MatchRecord) -> None:
        """Rate one match (once)."""
        if rec.table in self.done or not rec.rated:
            return
        self.done.add(rec.table)
        game = self.ratings.setdefault(rec.game, {})
        before = {p: game[p] for p in rec.people() if p in game}
        after = rate(rec, before)
        periods = (week(rec.at), month(rec.at))
        fresh = Rating().points
        for p, r in after.items():
            gain = r.points - (before[p].points if p in before else fresh)
            for period in periods:
                w = self.windows.setdefault((rec.game, period), {})
                w[p] = w.get(p, 0) + gain
            for g in rec.groups:
                self.groups.setdefault((g, rec.game), set()).add(p)
        game.update(after)

    def queue(self, pipe: Any, rk: Keys) -> None:
        """Queue the writes of this fold (after the deletion of every old ratings key)."""
        for game, people in self.ratings.items():
            items = list(people.items())
            for i in range(0, len(items), 1000):
                chunk = items[i:i + 1000]
                pipe.hset(rk.ratings(game), mapping={p: encode_rating(r) for p, r in chunk})
                pipe.zadd(rk.rating_top(game), {p: r.points for p, r in chunk})
        for (g, game), members in self.groups.items():
            pipe.sadd(rk.rating_group(g, game), *members)
        for (game, period), gains in self.windows.items():
            pipe.zadd(rk.rating_window(game, period), gains)
            pipe.expire(rk.rating_window(game, period), WEEK_TTL_S if period.startswith("w") else MONTH_TTL_S)
        done = list(self.done)
        for i in range(0, len(done), 5000):
            pipe.sadd(rk.rating_done(), *done[i:i + 5000])


def _by_slot(stream_keys: list[str]) -> list[list[str]]:
    """The keys in calls of at most :data:`STREAMS_PER_CALL`, each of one hash tag (one slot)."""
    tags: dict[str, list[str]] = {}
    for k in stream_keys:
        tags.setdefault(k[k.index("{"):k.index("}") + 1] if "{" in k else k, []).append(k)
    return [ks[i:i + STREAMS_PER_CALL] for ks in tags.values() for i in range(0, len(ks), STREAMS_PER_CALL)]


async def records(redis: Any, keys: Keys, archives: Iterable[str] = ()) -> list[MatchRecord]:
    """Every finished match's record, from the archives and the streams (the streams win), in the
    order they finished."""
    found: dict[str, MatchRecord] = {}
    for path in archives:
        for a in load_archive(path).values():
            rec = record_from_events(a.table, a.events)
            if rec is not None:
                found[rec.table] = rec
    stream_keys = [as_text(k) async for k in redis.scan_iter(match=keys.table_keys("events"), count=1000)]
    sha = await redis.script_load(_NOT_MOVES)
    calls = _by_slot(stream_keys)

    async def read(batch: list[list[str]]) -> list[Any]:
        pipe = redis.pipeline(transaction=False)
        for ks in batch:
            # execute_command: a cluster pipeline refuses evalsha() (see service.store.event_store)
            pipe.execute_command("EVALSHA", sha, len(ks), *ks)
        return list(await pipe.execute())

    # Redis filters the next batch while this process decodes the one before (two processes, two cores);
    # 20 calls a round trip measured best (5: 3.0 s, 20: 2.0 s, 40: 3.7 s for 10,000 matches, noisy).
    batches = [calls[i:i + CALLS_PER_TRIP] for i in range(0, len(calls), CALLS_PER_TRIP)]
    pending = asyncio.ensure_future(read(batches[0])) if batches else None
    for n, batch in enumerate(batches):
        assert pending is not None
        got = await pending
        pending = asyncio.ensure_future(read(batches[n + 1])) if n + 1 < len(batches) else None
        await asyncio.sleep(0)  # let the next read go out before decoding
        for ks, per_key in zip(batch, got, strict=True):
            for k, raws in zip(ks, per_key, strict=True):
                rec = record_from_events(k.rsplit(":", 2)[-2], raws)
                if rec is not None:
                    found[rec.table] = rec
    return sorted(found.values(), key=lambda r: (r.at, r.table))


async def rebuild(redis: Any, keys: Keys, archives: Iterable[str] = ()) -> Fold:
    """Replace every rating by the fold of every finished match (see the module docstring)."""
    fold = Fold()
    t0 = time.perf_counter()
    found = await records(redis, keys, archives)
    t1 = time.perf_counter()
    for rec in found:
        fold.add(rec)
    t2 = time.perf_counter()
    old = [k async for k in redis.scan_iter(match=keys.rating_keys(), count=1000)]
    keep = {k for name in (keys.rating_queue(), keys.rating_lease()) for k in (name, name.encode())}
    pipe = redis.pipeline(transaction=True)
    for k in old:
        if k not in keep:
            pipe.delete(k)
    fold.queue(pipe, keys)
    await pipe.execute()
    fold.seconds = {"read": t1 - t0, "rate": t2 - t1, "write": time.perf_counter() - t2}
    return fold
