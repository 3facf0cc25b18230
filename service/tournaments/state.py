"""A tournament's state, folded from its events (no IO, no clock)."""

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
    if isinstance(event, TournamentOpened):
        return Tournament(id=tid, version=1, game=event.game, options=dict(event.options), seats=event.seats,
                          rounds=event.rounds, creator=event.creator, room=event.room, locale=event.locale,
                          turn_seconds=event.turn_seconds, level=event.level)
    if t is None:
        raise ValueError(f"{type(event).__name__} before TournamentOpened")
    t = replace(t, version=t.version + 1)
    if isinstance(event, EntrantJoined):
        return replace(t, entrants=(*t.entrants, event.player), locales=(*t.locales, event.locale))
    if isinstance(event, EntrantLeft):
        i = t.entrant_of(event.player)
        if i is None:
            return t
        return replace(t, entrants=t.entrants[:i] + t.entrants[i + 1:],
                       locales=t.locales[:i] + t.locales[i + 1:])
    if isinstance(event, RoundStarted):
        return replace(t, status=RUNNING, round=event.round, seed=event.seed, commitment=event.commitment,
                       draws={**t.draws, event.round: tuple(event.tables)})
    if isinstance(event, TableScored):
        draw = next(d for d in t.tables(event.round) if d.table == event.table)
        scored = Scored(list(draw.seats), event.ranks, event.points)
        return replace(t, scored={**t.scored, event.table: scored})
    if isinstance(event, RoundFinished):
        return replace(t, seeds={**t.seeds, event.round: t.seed})
    if isinstance(event, TournamentFinished):
        return replace(t, status=FINISHED, podium=tuple(event.podium))
    if isinstance(event, TournamentCancelled):
        return replace(t, status=CANCELLED)
    raise ValueError(f"unknown event {type(event).__name__}")
