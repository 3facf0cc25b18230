"""The daily deal: one deal a day per game, the same for everyone, played once.  Pure.

Every UTC day has one deal per game (:data:`GAMES`): Cinquillo clásico for 4 players, and one round
of 535 for 4 players.  A person plays it at seat 1 against three AI players of the ``daily`` level
(the hard player with a fixed iteration cap instead of a time budget, :data:`LEVEL`: the same
choices meet the same answers, so that results compare), once per day and game.

- **The seed** is derived from a server secret and the date (:func:`seed`, HMAC-SHA256), so nobody
  can predict tomorrow's deal; its SHA-256 commitment is shown when a person starts, the seed itself
  only once the embargo lifts (:mod:`service.domain.embargo`).
- **The embargo** on a day's deal lifts :data:`GRACE_S` after the UTC day ends (:func:`embargo`):
  an attempt started just before midnight may be finished in that time, and nobody may see the deal
  (a replay, the seed) while anyone can still play it.  An attempt still unfinished then is closed
  (:func:`expired`) and not scored.
- **One attempt** per person (``platform``, ``user``: the identity the platform gives; the web
  table and the Telegram Mini App use the Telegram identity) per day and game: the table's id is
  derived from the person, the game and the day (:func:`table_id`), so a retry, a second ``/daily``
  or the web's "Daily deal" button all name the same table.
- **Scores** compare: Cinquillo by place at the table, then cards left; 535 by points, then place
  (:func:`score_of`), both as one number where lower is better (:meth:`Score.value`), ranked among
  everyone who played that deal (:func:`standing`).
- **The share line** (:func:`turn_marks`) shows what the person did on each of their turns
  (played, passed, went out) and never a card.
"""

from __future__ import annotations

import base64
import calendar
import hashlib
import hmac
import time
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from service.domain.embargo import Embargo
from service.domain.identities import Player

GAMES = ("cinquillo", "535")
#: the options of each game's deal: Cinquillo clásico (one round: the first out wins), one round of 535
OPTIONS: dict[str, dict[str, Any]] = {"cinquillo": {"preset": "clasico"}, "535": {"target": 1}}
PLAYERS = 4
#: the AI players' level at a daily table: hard, with an iteration cap (service.write.bots)
LEVEL = "daily"
KIND = "daily"
DAY_S = 86_400
#: how long after its UTC day ends a day's deal stays embargoed (and its attempts may be finished)
GRACE_S = 2 * 3600.0

_SEED_DOMAIN = b"cinq/daily-seed/v1\x00"
_TABLE_DOMAIN = b"cinq/daily-table/v1\x00"


def day_of(now: float) -> int:
    """The UTC day of a time, as a day number (days since 1970-01-01)."""
    return int(now // DAY_S)


def day_name(day: int) -> str:
    """A day number as its date, ``2026-12-06``."""
    return time.strftime("%Y-%m-%d", time.gmtime(day * DAY_S))


def parse_day(name: str) -> int | None:
    """The day number of a date written ``YYYY-MM-DD`` (None: not such a date)."""
    try:
        parsed = time.strptime(name, "%Y-%m-%d")
    except (ValueError, TypeError):
        return None
    return calendar.timegm(parsed) // DAY_S


def clock_text(at: float) -> str:
    """A time as people are told it, in UTC: ``2026-12-07 02:00 UTC``."""
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(at))


def day_end(day: int) -> float:
    """When the day ends (unix seconds): the first second of the next day."""
    return float((day + 1) * DAY_S)


def seed(secret: bytes, game: str, day: int) -> str:
    """The day's seed for ``game``: HMAC-SHA256 of the game and the date under the server's daily
    secret (hex, 32 characters).  Without the secret nobody can compute it before it is revealed."""
    msg = _SEED_DOMAIN + f"{game}\x00{day_name(day)}".encode()
    return hmac.new(secret, msg, hashlib.sha256).hexdigest()[:32]


def table_id(secret: bytes, person: Player, game: str, day: int) -> str:
    """The table of ``person``'s attempt at the day's ``game`` (10 lowercase base32 characters, like
    every table id): the same for every retry and every surface, keyed with the token secret so that
    nobody can name another person's attempt."""
    msg = _TABLE_DOMAIN + f"{person.platform}\x00{person.user}\x00{game}\x00{day}".encode()
    digest = hmac.new(secret, msg, hashlib.sha256).digest()
    return base64.b32encode(digest[:10]).decode()[:10].lower()


def embargo(game: str, day: int, grace_s: float = GRACE_S) -> Embargo:
    """The embargo on the day's deal: key ``<game>:<date>``, lifting ``grace_s`` after the day ends."""
    return Embargo(kind=KIND, key=f"{game}:{day_name(day)}", until=day_end(day) + grace_s)


def daily_of(e: Embargo | None) -> tuple[str, int] | None:
    """The game and day of a daily deal's embargo (None: not a daily deal)."""
    if e is None or e.kind != KIND:
        return None
    game, _, name = e.key.partition(":")
    day = parse_day(name)
    return None if day is None or game not in GAMES else (game, day)


def expired(e: Embargo | None, now: float) -> bool:
    """Whether an attempt at a daily deal can no longer be played: its embargo has lifted."""
    return daily_of(e) is not None and e is not None and e.until is not None and now >= e.until


def bot_seed(e: Embargo, version: int) -> int:
    """The AI players' seed at a daily table: the deal's key and the table's version, not the
    table's id, so that every attempt's AI players answer the same choices the same way."""
    return zlib.crc32(f"{e.kind}:{e.key}:{version}".encode())


@dataclass(frozen=True)
class Score:
    """An attempt's result: ``place`` at the table (1 is first; ties share) and ``left``: cards
    left in hand (Cinquillo) or points taken (535)."""

    game: str
    place: int
    left: int

    def value(self) -> float:
        """One number that orders attempts, lower is better: Cinquillo by place then cards left,
        535 by points then place (as the board's sorted set scores it)."""
        if self.game == "535":
            return float(self.left * 10 + self.place)
        return float(self.place * 100 + self.left)

    @property
    def won(self) -> bool:
        """Whether the person finished first at the table (alone or tied)."""
        return self.place == 1


def score_of(game: str, result: dict[str, Any], seat: int = 0) -> Score:
    """The score of ``seat`` in a finished daily match's ``result`` (the engine's)."""
    last = (result.get("rounds") or [{}])[-1]
    if game == "535":
        points = [int(p) for p in result.get("scores") or last.get("points") or []]
        mine = points[seat]
        return Score(game, 1 + sum(1 for p in points if p < mine), mine)
    left = [int(n) for n in last.get("cards_left") or []]
    mine = left[seat]
    return Score(game, 1 + sum(1 for n in left if n < mine), mine)


@dataclass(frozen=True)
class Standing:
    """Where an attempt stands among everyone who played the deal: ``rank`` (1 is best; equal
    scores share a rank), ``of`` players, and ``percentile``: the share of the *other* players
    whose score is worse, in percent (100: better than all of them; alone: 100)."""

    rank: int
    of: int
    percentile: int


def standing(better: int, worse: int, of: int) -> Standing:
    """The standing of a score that ``better`` players beat and that beats ``worse`` of ``of``."""
    others = of - 1
    pct = 100 if others <= 0 else round(100 * worse / others)
    return Standing(rank=better + 1, of=of, percentile=pct)


PLAYED, PASSED, OUT = "🟩", "⬜", "🏁"
#: the person's turns per line of the share text
MARKS_PER_LINE = 6


def turn_marks(history: Sequence[dict[str, Any]], seat: int = 0, went_out: bool = False) -> str:
    """What ``seat`` did on each of its turns, one mark a turn (played, passed, and the last card
    played when it went out), :data:`MARKS_PER_LINE` to a line.  Never a card: only whether a move
    was a pass."""
    marks = [PASSED if str(m.get("move")) == "pass" else PLAYED
             for m in history if m.get("seat") == seat]
    if went_out and marks:
        marks[-1] = OUT
    return "\n".join("".join(marks[i:i + MARKS_PER_LINE]) for i in range(0, len(marks), MARKS_PER_LINE))


def went_out(game: str, result: dict[str, Any], seat: int = 0) -> bool:
    """Whether ``seat`` ended the round by playing its last card."""
    last = (result.get("rounds") or [{}])[-1]
    if game == "535":
        return bool(last.get("went_out") == seat)
    left = last.get("cards_left") or []
    return seat < len(left) and int(left[seat]) == 0


@dataclass(frozen=True)
class Streaks:
    """``played``: days in a row the person played (up to today, or yesterday when today's is still
    to play); ``won``: days in a row they won, up to their last day played; ``days``: days played."""

    played: int
    won: int
    days: int


def streaks(days: Iterable[tuple[int, bool]], today: int) -> Streaks:
    """The streaks of a person's days played (``(day, won)``), as of ``today``."""
    won_on = dict(days)
    if not won_on:
        return Streaks(0, 0, 0)
    start = today if today in won_on else today - 1
    played = 0
    while start - played in won_on:
        played += 1
    last = max(won_on)
    won = 0
    while won_on.get(last - won):
        won += 1
    return Streaks(played, won, len(won_on))
