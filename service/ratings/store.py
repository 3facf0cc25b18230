"""The ratings in Redis, every key under the one hash tag ``{ratings}`` (one script call, one slot).

Keys (after ``CINQ_KEY_PREFIX``; the key table in ``docs/service.md`` has them too):

- ``rt:{ratings}:queue`` — stream of finished matches to rate (field ``r``: a record's JSON), group
  ``raters``; written by the worker after the append, read by the projector.
- ``rt:{ratings}:done`` — set of the tables already rated: a match counts once, whatever is redelivered.
- ``rt:{ratings}:r:<game>`` — hash ``platform:user`` → ``<matches>|<rating JSON>``.
- ``rt:{ratings}:top:<game>`` — sorted set: people by shown rating (the global board).
- ``rt:{ratings}:grp:<platform>:<chat>:<game>`` — set: the people who played that game in a group.
- ``rt:{ratings}:win:<game>:<period>`` — sorted set: rating points won in a week (``w2026-49``) or a
  month (``m2026-12``), UTC; expires 40 days (a week) or 400 days (a month) after its last write.
- ``rt:{ratings}:lease`` — the projector rating now (one at a time, so that matches are rated in
  the order they finished).

:meth:`RatingStore.apply` writes one match's new ratings with a compare-and-set on every person's
match count, and marks the table done, in one call: a second copy does nothing, a concurrent update
of one of its people makes it read and rate again.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Iterable
from typing import Any

import orjson

from service.ratings.model import MatchRecord, Rating
from service.store.decoding import as_text
from service.store.keys import Keys

WEEK_TTL_S, MONTH_TTL_S = 40 * 86400, 400 * 86400

# KEYS: done, ratings hash, top board, then the group sets, then the window boards.
# ARGV: table, #people, #groups, #windows, a TTL per window, then per person: field, expected matches,
# stored value, shown rating, change.  Returns 1 (applied), 0 (already rated), -1 (a person changed).
_APPLY = """
if redis.call('SISMEMBER', KEYS[1], ARGV[1]) == 1 then return 0 end
local np, ng, nw = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
local base = 4 + nw
for i = 0, np - 1 do
  local cur = redis.call('HGET', KEYS[2], ARGV[base + 1 + i * 5])
  local have = 0
  if cur then have = tonumber(string.match(cur, '^(%d+)|')) end
  if have ~= tonumber(ARGV[base + 2 + i * 5]) then return -1 end
end
for i = 0, np - 1 do
  local f = ARGV[base + 1 + i * 5]
  redis.call('HSET', KEYS[2], f, ARGV[base + 3 + i * 5])
  redis.call('ZADD', KEYS[3], ARGV[base + 4 + i * 5], f)
  for g = 1, ng do redis.call('SADD', KEYS[3 + g], f) end
  for w = 1, nw do redis.call('ZINCRBY', KEYS[3 + ng + w], ARGV[base + 5 + i * 5], f) end
end
for w = 1, nw do redis.call('EXPIRE', KEYS[3 + ng + w], ARGV[4 + w]) end
redis.call('SADD', KEYS[1], ARGV[1])
return 1
"""


def week(at: float) -> str:
    """The ISO week of a time (UTC), as a window name: ``w2026-49``."""
    y, w, _ = dt.datetime.fromtimestamp(at, dt.UTC).isocalendar()
    return f"w{y}-{w:02d}"


def month(at: float) -> str:
    """The month of a time (UTC), as a window name: ``m2026-12``."""
    t = time.gmtime(at)
    return f"m{t.tm_year}-{t.tm_mon:02d}"


def encode_rating(r: Rating) -> str:
    """The stored value: the match count first, so that the script can compare it without JSON."""
    return f"{r.matches}|{orjson.dumps(r.to_json()).decode()}"


def decode_rating(raw: Any) -> Rating:
    """A stored value back."""
    return Rating.from_json(orjson.loads(as_text(raw).partition("|")[2]))


class RatingStore:
    """Reads and compare-and-set writes of ratings."""

    def __init__(self, redis: Any, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._apply = redis.register_script(_APPLY)

    async def get(self, game: str, people: Iterable[str]) -> dict[str, Rating]:
        """The ratings of ``people`` in ``game`` (those never rated are missing)."""
        people = list(people)
        if not people:
            return {}
        raws = await self.redis.hmget(self.keys.ratings(game), people)
        return {p: decode_rating(r) for p, r in zip(people, raws, strict=True) if r is not None}

    def apply_args(self, rec: MatchRecord, before: dict[str, Rating],
                   after: dict[str, Rating]) -> tuple[list[str], list[Any]]:
        """The script's keys and arguments that write ``after`` if nobody's ``before`` changed."""
        k = self.keys
        windows = [(k.rating_window(rec.game, week(rec.at)), WEEK_TTL_S),
                   (k.rating_window(rec.game, month(rec.at)), MONTH_TTL_S)]
        keys = [k.rating_done(), k.ratings(rec.game), k.rating_top(rec.game),
                *(k.rating_group(g, rec.game) for g in rec.groups),
                *(w for w, _ in windows)]
        args: list[Any] = [rec.table, len(after), len(rec.groups), len(windows), *(ttl for _, ttl in windows)]
        for person, r in after.items():
            was = before.get(person)
            old_points = was.points if was is not None else Rating().points
            args += [person, was.matches if was is not None else 0, encode_rating(r), r.points,
                     r.points - old_points]
        return keys, args

    async def apply(self, rec: MatchRecord, before: dict[str, Rating], after: dict[str, Rating]) -> int:
        """Write one match's ratings: 1 applied, 0 the table was rated already, -1 someone changed."""
        keys, args = self.apply_args(rec, before, after)
        return int(await self._apply(keys=keys, args=args))

    async def is_rated(self, table: str) -> bool:
        """Whether a table's match has been rated."""
        return bool(await self.redis.sismember(self.keys.rating_done(), table))
