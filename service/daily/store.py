"""The daily deal's results in Redis: each day's board, each person's days, the groups they share.

Keys (after ``CINQ_KEY_PREFIX``; also in the key table of ``docs/service.md``):

- ``dly:{<game>:<date>}:board`` — sorted set: ``platform:user`` scored by their attempt's score
  (:meth:`service.domain.daily.Score.value`, lower is better): the day's board, and every rank.
- ``dly:{<game>:<date>}:att`` — hash ``platform:user`` → the attempt (:class:`Attempt` as JSON: its
  score, turn marks, table and the person's name).
- ``dly:{<game>:<date>}:commit`` — string: the day's commitment, set by the first ``/daily`` of the
  day: every later one must derive the same seed (a role configured with another daily secret
  would deal another deal, and its players' results would not compare).
- ``dly:{<p>:<user>}:hist`` — hash ``<game>:<date>`` → the person's attempt that day (the same JSON):
  their streaks and their week.  Kept (about 100 bytes a day played).
- ``dly:{<p>:<user>}:groups`` — hash ``<chat>`` → the group's title (or empty): the groups of that
  platform where the person used the bot, for the share buttons.  Expires 90 days after the last use.
- ``dly:{<p>:<chat>}:people`` — set: the people who used ``/daily`` in that group (beside those who
  played a match there, ``rt:{ratings}:grp:…``): its board's members.  Expires 90 days after the last.

A day's three keys live until retention archives them with the finished tables
(:func:`archive_days`, ``CINQ_RETAIN_FINISHED_DAYS`` after the day's deal was revealed).

A result is written by the worker that finished the attempt's match (:func:`record`, queued on the
pipeline of its acknowledgements, as ratings are), three idempotent writes: a copy (a worker that
takes over, a redelivery) writes the same values again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import orjson

from service.domain import daily
from service.domain.identities import Player
from service.store.decoding import as_text
from service.store.keys import Keys

GROUPS_TTL_S = 90 * 86400
COMMIT_KEEP_S = 3 * 86400


def member(p: Player) -> str:
    """A person on a board: ``platform:user``."""
    return f"{p.platform}:{p.user}"


@dataclass(frozen=True)
class Attempt:
    """A finished attempt: its ``score``, the person's turn ``marks`` (the share line), its ``table``,
    the person's ``name`` (for boards) and when it ended (``at``)."""

    score: daily.Score
    marks: str
    table: str
    name: str
    at: float

    def dumps(self) -> bytes:
        """The JSON stored."""
        return orjson.dumps({"p": self.score.place, "l": self.score.left, "m": self.marks, "t": self.table,
                             "n": self.name, "at": self.at})

    @classmethod
    def loads(cls, game: str, raw: str | bytes) -> Attempt:
        """An attempt as stored."""
        d = orjson.loads(raw)
        return cls(daily.Score(game, int(d["p"]), int(d["l"])), str(d.get("m", "")), str(d.get("t", "")),
                   str(d.get("n", "")), float(d.get("at", 0.0)))


def attempt_of(game: str, result: dict[str, Any], history: list[dict[str, Any]], table: str, person: Player,
               at: float) -> Attempt:
    """The attempt a finished daily match records for the person at seat 1."""
    return Attempt(daily.score_of(game, result), daily.turn_marks(history, 0, daily.went_out(game, result)),
                   table, person.name or person.user, at)


def record(pipe: Any, k: Keys, game: str, day: int, person: Player, att: Attempt) -> None:
    """Queue the writes of a finished attempt: the day's board and attempts, the person's days."""
    who, date = member(person), daily.day_name(day)
    raw = att.dumps()
    pipe.zadd(k.daily_board(game, date), {who: att.score.value()})
    pipe.hset(k.daily_attempts(game, date), who, raw)
    pipe.hset(k.daily_history(person.platform, person.user), f"{game}:{date}", raw)


def note_group(pipe: Any, k: Keys, person: Player, chat: str, title: str | None, *,
               people: bool = False) -> None:
    """Queue: ``person`` used the bot in the group ``chat`` (its ``title`` when the platform said);
    ``people``: they used ``/daily`` there (a member of its board)."""
    key = k.daily_groups(person.platform, person.user)
    pipe.hset(key, chat, title or "")
    pipe.expire(key, GROUPS_TTL_S)
    if people:
        pipe.sadd(k.daily_people(person.platform, chat), member(person))
        pipe.expire(k.daily_people(person.platform, chat), GROUPS_TTL_S)


class DailyStore:
    """Reads (and the gateway's few writes) of the daily deal's keys."""

    def __init__(self, redis: Any, keys: Keys) -> None:
        self.redis = redis
        self.keys = keys
        self._commit = redis.register_script(_COMMIT)

    async def commit(self, game: str, day: int, commitment: str, now: float) -> bool:
        """Set the day's commitment if it is the first; whether ``commitment`` is the day's."""
        ttl = max(int(daily.day_end(day) + daily.GRACE_S + COMMIT_KEEP_S - now), 60)
        key = self.keys.daily_commit(game, daily.day_name(day))
        shown = await self._commit(keys=[key], args=[commitment, ttl])
        return as_text(shown) == commitment

    async def mine(self, person: Player, game: str, day: int) -> Attempt | None:
        """The person's finished attempt at the day's ``game`` (None: none yet)."""
        raw = await self.redis.hget(self.keys.daily_history(person.platform, person.user),
                                   f"{game}:{daily.day_name(day)}")
        return Attempt.loads(game, raw) if raw else None

    async def standing(self, game: str, day: int, score: daily.Score) -> daily.Standing:
        """Where ``score`` stands among the day's attempts."""
        key, v = self.keys.daily_board(game, daily.day_name(day)), score.value()
        pipe = self.redis.pipeline(transaction=False)
        pipe.zcount(key, "-inf", f"({v}")
        pipe.zcount(key, f"({v}", "+inf")
        pipe.zcard(key)
        better, worse, of = await pipe.execute()
        return daily.standing(int(better), int(worse), max(int(of), 1))

    async def days(self, person: Player, game: str) -> list[tuple[int, bool]]:
        """Every day the person finished the daily ``game``, with whether they won it."""
        raw = await self.redis.hgetall(self.keys.daily_history(person.platform, person.user))
        out = []
        for field, value in raw.items():
            g, _, name = as_text(field).partition(":")
            day = daily.parse_day(name)
            if g == game and day is not None:
                out.append((day, Attempt.loads(game, value).score.won))
        return out

    async def streaks(self, person: Player, game: str, today: int) -> daily.Streaks:
        """The person's streaks at the daily ``game`` as of ``today``."""
        return daily.streaks(await self.days(person, game), today)

    async def week(self, person: Player, game: str, today: int) -> list[tuple[int, Attempt | None]]:
        """The person's attempts of the last seven days, today last."""
        days = list(range(today - 6, today + 1))
        raws = await self.redis.hmget(self.keys.daily_history(person.platform, person.user),
                                      [f"{game}:{daily.day_name(d)}" for d in days])
        return [(d, Attempt.loads(game, r) if r else None) for d, r in zip(days, raws, strict=True)]

    async def top(self, game: str, day: int, n: int) -> list[tuple[str, Attempt]]:
        """The day's best ``n`` attempts, best first."""
        key = self.keys.daily_board(game, daily.day_name(day))
        members = [as_text(m) for m in await self.redis.zrange(key, 0, n - 1)]
        return await self._attempts(game, day, members)

    async def among(self, game: str, day: int, people: Iterable[str]) -> list[tuple[str, Attempt]]:
        """The day's attempts of ``people`` (``platform:user``), best first."""
        wanted = sorted(set(people))
        if not wanted:
            return []
        scores = await self.redis.zmscore(self.keys.daily_board(game, daily.day_name(day)), wanted)
        played = sorted((s, m) for m, s in zip(wanted, scores, strict=True) if s is not None)
        return await self._attempts(game, day, [m for _, m in played])

    async def _attempts(self, game: str, day: int, members: list[str]) -> list[tuple[str, Attempt]]:
        if not members:
            return []
        raws = await self.redis.hmget(self.keys.daily_attempts(game, daily.day_name(day)), members)
        return [(m, Attempt.loads(game, r)) for m, r in zip(members, raws, strict=True) if r]

    async def groups(self, person: Player) -> dict[str, str]:
        """The groups where the person used the bot: chat → title (may be empty)."""
        raw = await self.redis.hgetall(self.keys.daily_groups(person.platform, person.user))
        return {as_text(c): as_text(t) for c, t in raw.items()}


# The day's commitment, set once.  KEYS: the commit key.  ARGV: commitment, ttl.  Returns the day's.
_COMMIT = """
local shown = redis.call('GET', KEYS[1])
if shown then return shown end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return ARGV[1]
"""
