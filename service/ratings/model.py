"""Who beat whom in a finished match, and the rating update.  Pure (no IO, no clock).

A :class:`MatchRecord` is derived from the table at its ``MatchFinished`` (the engine's result, and
the seats: who is a person, which AI level, whose seat an AI player took over).  One definition,
used live by the worker and by ``cinq ratings rebuild``, so the two cannot drift.

Ranks (1 is best): the engine's winners share rank 1 (a shared win — cabrón, 535 — is a tie); the
others follow by score (Cinquillo: more is better; 535: fewer points is better), equal scores tied;
a person who left a running match (their seat taken over by an AI player: they left, were kicked or
let the timer run out too often) is ranked last.  With teams (Cinquillo ``teams``) a team is rated
as one side.  AI seats take part with a fixed rating per level (:data:`BOT_RATINGS`) and are never
updated, so a match of one person against AI players is rated against the AI's level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from openskill.models import PlackettLuce
from openskill.models.weng_lin.plackett_luce import PlackettLuceRating

from service.domain.tables.state import Table

MU, SIGMA = 25.0, 25.0 / 3.0
# An AI player's fixed rating per level: (mu, sigma).  Small sigma: a known strength.
BOT_RATINGS: dict[str, tuple[float, float]] = {
    "easy": (18.0, 1.0), "medium": (25.0, 1.0), "hard": (30.0, 1.0),
    # the daily deal's AI players: the hard player with a fixed iteration cap (service.write.bots)
    "daily": (30.0, 1.0)}
# Shown rating: 1000 + 20 × (mu − 3 sigma), so that a newcomer shows 1000 and it only grows with evidence.
BASE, SCALE = 1000.0, 20.0
TREND = 10  # how many of the last matches' changes a rating remembers

_MODEL = PlackettLuce(mu=MU, sigma=SIGMA)
_TAU_SQUARED = _MODEL.tau * _MODEL.tau


Teams = list[list[tuple[float, float]]]  # each team's (mu, sigma) per player


def plackett_luce(teams: Teams, ranks: list[float]) -> Teams:
    """openskill's ``PlackettLuce.rate(teams, ranks=ranks)`` on ``(mu, sigma)`` pairs, to the bit.

    It runs the library's own update (``_compute``) after the same steps as ``rate``: sigma widened
    by tau, the teams stably sorted by rank, and put back in their order after.  What it leaves out
    is what a rebuild of 10,000 matches paid for and does not need: the argument checks (ours are
    built right), the deep copy of the teams, and a new rating object (with a uuid4 each) per seat:
    the update writes its results into the objects it is given, so a few kept here are refilled
    for each match and read back at once (no await in between: nothing else can use them).
    ``tests/service/test_ratings_model.py`` holds it equal to ``rate`` itself."""
    order = sorted(range(len(teams)), key=ranks.__getitem__)
    need = sum(len(t) for t in teams)
    while len(_POOL) < need:
        _POOL.append(PlackettLuceRating(MU, SIGMA))
    sorted_teams: list[list[PlackettLuceRating]] = []
    used = 0
    for i in order:
        team = _POOL[used:used + len(teams[i])]
        used += len(team)
        for p, (mu, sigma) in zip(team, teams[i], strict=True):
            p.mu, p.sigma = mu, math.sqrt(sigma * sigma + _TAU_SQUARED)
        sorted_teams.append(team)
    done = _MODEL._compute(teams=sorted_teams, ranks=sorted(ranks))
    out: Teams = [[] for _ in teams]
    for k, i in enumerate(order):
        out[i] = [(p.mu, p.sigma) for p in done[k]]
    return out


_POOL: list[PlackettLuceRating] = []


def points(mu: float, sigma: float) -> int:
    """The rating people see: a conservative estimate (mu − 3 sigma), scaled."""
    return round(BASE + SCALE * (mu - 3 * sigma))


@dataclass(frozen=True)
class SeatRecord:
    """One seat at the end: a person (``platform``, ``user``, ``name``) or an AI player
    (``bot`` its level); ``left``: the person's seat was taken over by an AI player."""

    rank: int
    team: int
    platform: str | None = None
    user: str | None = None
    name: str = ""
    bot: str | None = None
    left: bool = False

    @property
    def person(self) -> str | None:
        """The person's key (``platform:user``), or None for an AI seat."""
        return None if self.user is None else f"{self.platform}:{self.user}"


@dataclass(frozen=True)
class MatchRecord:
    """A finished match as the ratings see it (JSON-friendly; see :func:`to_json`)."""

    table: str
    game: str
    at: float
    seats: tuple[SeatRecord, ...]
    # the group chats that showed the table, as "platform:chat" (their boards list its people)
    groups: tuple[str, ...] = ()

    def people(self) -> list[str]:
        """The people who sat (each once, in seat order)."""
        return list(dict.fromkeys(s.person for s in self.seats if s.person is not None))

    @property
    def rated(self) -> bool:
        """A match is rated when a person sat at it (AI seats rate against their level)."""
        return bool(self.people()) and len(self.seats) >= 2


def _score(v: Any) -> Fraction | int:
    # Scores are ints, or Cinquillo's exact shares written as "7/2" (C-13).
    return v if type(v) is int else Fraction(str(v))


def seat_ranks(game: str, result: dict[str, Any], seats: int, left: set[int]) -> list[int]:
    """Each seat's rank (1 best, ties share) from the engine's result; ``left`` seats are last."""
    winners = set(result.get("winners", [])) - left  # a winning seat taken over is the AI's win
    raw = result.get("scores") or [0] * seats
    scores = [_score(raw[i]) for i in range(seats)]  # each once: a Fraction is dear to make
    others = sorted({scores[i] for i in range(seats) if i not in winners and i not in left},
                    reverse=game != "535")
    base = 2 if winners else 1
    place = {v: base + k for k, v in enumerate(others)}
    ranks = [1 if i in winners else place[scores[i]] if i not in left else 0 for i in range(seats)]
    last = max([r for i, r in enumerate(ranks) if i not in left], default=0) + 1
    return [last if i in left else r for i, r in enumerate(ranks)]


# A seat at the end, as the record needs it: the person (platform, user, name) or None, and the AI
# level playing it (None: the person plays it; both: an AI player took the person's seat over).
EndSeat = tuple[tuple[str, str, str] | None, str | None]


def record_of(t: Table, result: dict[str, Any], at: float) -> MatchRecord:
    """The record of table ``t`` finished with ``result`` (``MatchFinished.result``) at ``at``."""
    seats: list[EndSeat] = [((s.player.platform, s.player.user, s.player.name) if s.player is not None
                             else None, s.bot) for s in t.seats]
    rooms = (*t.rooms, t.home) if t.home is not None else t.rooms
    groups = [f"{r.platform}:{r.chat}" for r in rooms if r.kind == "group"]
    return record_from(t.id, t.game, result, at, seats, groups)


def record_from(table: str, game: str, result: dict[str, Any], at: float, end: list[EndSeat],
                groups: list[str]) -> MatchRecord:
    """:func:`record_of` from the seats alone (``groups``: the group rooms as ``platform:chat``): how
    a result ranks the seats and pairs them in teams, apart from where the seats come from."""
    n = len(end)
    left = {i for i, (person, bot) in enumerate(end) if person is not None and bot is not None}
    ranks = seat_ranks(game, result, n, left)
    team_of = list(range(n))
    for k, members in enumerate(result.get("teams") or []):
        for i in members:
            if 0 <= i < n:
                team_of[i] = n + k  # team ids apart from the single-seat ids
    seats = []
    for i, (person, bot) in enumerate(end):
        team = i if i in left else team_of[i]  # a leaver is rated apart, last
        if person is not None:
            seats.append(SeatRecord(rank=ranks[i], team=team, platform=person[0], user=person[1],
                                    name=person[2], left=i in left))
        else:
            seats.append(SeatRecord(rank=ranks[i], team=team, bot=bot or "medium"))
    return MatchRecord(table=table, game=game, at=at, seats=tuple(seats), groups=tuple(dict.fromkeys(groups)))


@dataclass
class Rating:
    """A person's rating in one game, and what ``/rating`` shows besides."""

    mu: float = MU
    sigma: float = SIGMA
    matches: int = 0
    wins: int = 0
    name: str = ""
    trend: list[int] = field(default_factory=list)  # the last matches' changes of points, oldest first
    at: float = 0.0  # when the last rated match finished

    @property
    def points(self) -> int:
        """The shown rating."""
        return points(self.mu, self.sigma)

    def to_json(self) -> dict[str, Any]:
        """The stored form."""
        return {"mu": self.mu, "sigma": self.sigma, "n": self.matches, "w": self.wins, "name": self.name,
                "trend": self.trend, "at": self.at}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Rating:
        """The rating a :meth:`to_json` stored."""
        return Rating(float(d["mu"]), float(d["sigma"]), int(d["n"]), int(d["w"]), str(d.get("name", "")),
                      [int(x) for x in d.get("trend", [])], float(d.get("at", 0.0)))


def rate(rec: MatchRecord, current: dict[str, Rating]) -> dict[str, Rating]:
    """The people's ratings after ``rec`` (``current``: theirs before; a person missing is new).

    The teams (a seat alone, or a Cinquillo pair) are rated with Plackett–Luce by rank; AI seats use
    their level's fixed rating and are left out of the result.  A person seated twice (not possible
    through the service) would be rated by their first seat.
    """
    teams: dict[int, list[tuple[str | None, float, float]]] = {}
    seen: set[str] = set()
    for s in rec.seats:
        person = s.person
        if person is not None and person not in seen:
            seen.add(person)
            r = current.get(person)
            teams.setdefault(s.team, []).append((person, r.mu, r.sigma) if r else (person, MU, SIGMA))
        else:
            mu, sigma = BOT_RATINGS.get(s.bot or "medium", BOT_RATINGS["medium"])
            teams.setdefault(s.team, []).append((None, mu, sigma))
    order = list(teams)
    rank_of: dict[int, int] = {}
    for s in rec.seats:
        rank_of[s.team] = min(rank_of.get(s.team, s.rank), s.rank)
    ranks = [rank_of[k] for k in order]
    new = plackett_luce([[(mu, sigma) for _, mu, sigma in teams[k]] for k in order],
                        [float(r) for r in ranks])
    seats: dict[str, SeatRecord] = {}
    for s in rec.seats:
        if s.person is not None:
            seats.setdefault(s.person, s)  # a person's first seat, the one rated
    out: dict[str, Rating] = {}
    best = min(ranks)
    fresh = Rating()
    for k, team_rank, rated in zip(order, ranks, new, strict=True):
        for (who, _, _), (mu, sigma) in zip(teams[k], rated, strict=True):
            if who is None or who in out:
                continue
            s = seats[who]
            before = current.get(who) or fresh
            won = team_rank == best and not s.left
            delta = points(mu, sigma) - before.points
            out[who] = Rating(mu=mu, sigma=sigma, matches=before.matches + 1, wins=before.wins + won,
                              name=s.name or before.name, trend=[*before.trend, delta][-TREND:], at=rec.at)
    return out


def to_json(rec: MatchRecord) -> dict[str, Any]:
    """A record as plain JSON (the projector's queue carries it)."""
    return {"table": rec.table, "game": rec.game, "at": rec.at, "groups": list(rec.groups),
            "seats": [{k: v for k, v in s.__dict__.items()
                       if v not in (None, "", False) or k in ("rank", "team")} for s in rec.seats]}


def from_json(d: dict[str, Any]) -> MatchRecord:
    """The record :func:`to_json` wrote."""
    return MatchRecord(table=str(d["table"]), game=str(d["game"]), at=float(d["at"]),
                       seats=tuple(SeatRecord(**s) for s in d["seats"]), groups=tuple(d.get("groups", ())))
