"""A tournament's state, folded from its events with :func:`evolve` (no IO, no clock).

The fold is a :class:`~service.tournaments.events.TournamentVisitor`, as a table's is an event visitor."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from service.domain.events import Event
from service.domain.identities import Player, Room
from service.tournaments import swiss
from service.tournaments.events import (
    EntrantJoined,
    EntrantLeft,
    RoundFinished,
    RoundStarted,
    TableDraw,
    TableScored,
    TournamentCancelled,
    TournamentFinished,
    TournamentOpened,
    TournamentVisitor,
)

SIGNUP, RUNNING, FINISHED, CANCELLED = "signup", "running", "finished", "cancelled"


@dataclass(frozen=True)
class Scored:
    """A finished table of a round."""

    seats: list[int | None]
    ranks: list[int]
    points: list[float]


@dataclass(frozen=True)
class Tournament:
    """Everything known about a tournament at ``version`` (events folded)."""

    id: str
    version: int
    game: str
    options: dict[str, Any]
    seats: int
    rounds: int
    creator: Player
    room: Room
    locale: str
    turn_seconds: float
    level: str
    status: str = SIGNUP
    entrants: tuple[Player, ...] = ()
    locales: tuple[str, ...] = ()
    round: int = 0
    seed: str = ""
    commitment: str = ""
    draws: dict[int, tuple[TableDraw, ...]] = field(default_factory=dict)
    scored: dict[str, Scored] = field(default_factory=dict)
    seeds: dict[int, str] = field(default_factory=dict)  # the seeds of the rounds finished (shown)
    podium: tuple[int, ...] = ()

    def entrant_of(self, player: Player | None) -> int | None:
        """The entrant index of a person, or None."""
        for i, p in enumerate(self.entrants):
            if player is not None and player.same(p):
                return i
        return None

    def tables(self, round_no: int | None = None) -> tuple[TableDraw, ...]:
        """The tables of a round (default: the current one)."""
        return self.draws.get(self.round if round_no is None else round_no, ())

    def round_over(self) -> bool:
        """Whether every table of the current round has finished."""
        return bool(self.tables()) and all(d.table in self.scored for d in self.tables())

    def order(self) -> list[int]:
        """The standings: entrant indexes, best first."""
        return swiss.standings(len(self.entrants), self._scored())

    def totals(self) -> list[float]:
        """Each entrant's points so far."""
        return swiss.totals(len(self.entrants), self._scored())

    def _scored(self) -> list[tuple[list[int | None], list[int], list[float]]]:
        return [(s.seats, s.ranks, s.points) for s in self.scored.values()]


def evolve(t: Tournament | None, event: Event, *, tid: str = "") -> Tournament:
    """The state after ``event``; only ``TournamentOpened`` starts from None."""
    fold = _Evolve(tid)
    if t is None:
        if not isinstance(event, TournamentOpened):
            raise ValueError(f"{type(event).__name__} before TournamentOpened")
        return fold.tournament_opened(event, None)
    return fold.visit(event, t)


class _Evolve(TournamentVisitor[Tournament | None, Tournament]):
    """The fold, one event at a time: ``visit(event, tournament before)`` is the tournament after it."""

    __slots__ = ("tid",)

    def __init__(self, tid: str) -> None:
        self.tid = tid

    def tournament_opened(self, e: TournamentOpened, t: Tournament | None) -> Tournament:
        return Tournament(id=self.tid, version=1, game=e.game, options=dict(e.options), seats=e.seats,
                          rounds=e.rounds, creator=e.creator, room=e.room, locale=e.locale,
                          turn_seconds=e.turn_seconds, level=e.level)

    def entrant_joined(self, e: EntrantJoined, t: Tournament | None) -> Tournament:
        t = _known(t)
        return _next(t, entrants=(*t.entrants, e.player), locales=(*t.locales, e.locale))

    def entrant_left(self, e: EntrantLeft, t: Tournament | None) -> Tournament:
        t = _known(t)
        i = t.entrant_of(e.player)
        if i is None:
            return _next(t)
        return _next(t, entrants=t.entrants[:i] + t.entrants[i + 1:],
                     locales=t.locales[:i] + t.locales[i + 1:])

    def round_started(self, e: RoundStarted, t: Tournament | None) -> Tournament:
        t = _known(t)
        return _next(t, status=RUNNING, round=e.round, seed=e.seed, commitment=e.commitment,
                     draws={**t.draws, e.round: tuple(e.tables)})

    def table_scored(self, e: TableScored, t: Tournament | None) -> Tournament:
        t = _known(t)
        draw = next(d for d in t.tables(e.round) if d.table == e.table)
        return _next(t, scored={**t.scored, e.table: Scored(list(draw.seats), e.ranks, e.points)})

    def round_finished(self, e: RoundFinished, t: Tournament | None) -> Tournament:
        t = _known(t)
        return _next(t, seeds={**t.seeds, e.round: t.seed})

    def tournament_finished(self, e: TournamentFinished, t: Tournament | None) -> Tournament:
        return _next(_known(t), status=FINISHED, podium=tuple(e.podium))

    def tournament_cancelled(self, e: TournamentCancelled, t: Tournament | None) -> Tournament:
        return _next(_known(t), status=CANCELLED)


def _known(t: Tournament | None) -> Tournament:
    # evolve() lets only TournamentOpened start from None: every other event has a tournament before it.
    assert t is not None
    return t


def _next(t: Tournament, **changes: Any) -> Tournament:
    """The tournament one version on, with ``changes``."""
    return replace(t, version=t.version + 1, **changes)
