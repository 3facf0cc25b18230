"""A tournament's events, in the same envelope as a table's (``service.domain.events.encode``), and
:class:`TournamentVisitor`, the one dispatch on their types (as :mod:`service.domain.visitor` is for
a table's).

Past tense, pydantic, never rewritten (a change bumps ``schema_version`` and adds an upcaster, as
for tables).  The round's seed is in ``RoundStarted`` (the stream is the service's, like a table's):
messages show only its commitment until every table of the round has finished.
"""

from __future__ import annotations

from typing import Any, TypeVar

import orjson
from pydantic import BaseModel, ConfigDict

from service.domain.events import Event, Stored, decode_envelope
from service.domain.identities import Player, Room
from service.domain.visitor import Visitor

T = TypeVar("T")
R = TypeVar("R")


class TournamentOpened(Event):
    """Sign-up opened in a group: ``seats`` per table, ``rounds``, the tables' options."""

    game: str
    options: dict[str, Any]
    seats: int
    rounds: int
    creator: Player
    room: Room
    locale: str
    turn_seconds: float
    level: str


class EntrantJoined(Event):
    """A person signed up."""

    player: Player
    locale: str


class EntrantLeft(Event):
    """A person withdrew before the start."""

    player: Player


class TableDraw(BaseModel):
    """One table of a round: its id and, per seat, the entrant's index (None: an AI player)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    table: str
    seats: list[int | None]


class RoundStarted(Event):
    """A round was drawn: every table plays the deal of ``seed`` (committed to by ``commitment``)."""

    round: int
    seed: str
    commitment: str
    tables: list[TableDraw]


class TableScored(Event):
    """A table of the round finished: each seat's rank (1 best) and tournament points."""

    round: int
    table: str
    ranks: list[int]
    points: list[float]


class RoundFinished(Event):
    """Every table of the round finished; its seed may now be shown."""

    round: int


class TournamentFinished(Event):
    """The last round finished: the podium (entrant indexes, best first)."""

    podium: list[int]


class TournamentCancelled(Event):
    """The creator (or a moderator) cancelled it."""

    by: Player


EVENT_TYPES: dict[str, type[Event]] = {
    cls.__name__: cls for cls in (TournamentOpened, EntrantJoined, EntrantLeft, RoundStarted, TableScored,
                                  RoundFinished, TournamentFinished, TournamentCancelled)
}


def decode(raw: str | bytes) -> Stored:
    """A tournament event back from its envelope."""
    return decode_envelope(orjson.loads(raw), EVENT_TYPES)


class TournamentVisitor(Visitor[T, R]):
    """A reader of a tournament's events: ``visit(event, t)`` calls the method of the event's type;
    every method not overridden gives :meth:`other`."""

    __slots__ = ()

    def tournament_opened(self, e: TournamentOpened, t: T) -> R:
        return self.other(e, t)

    def entrant_joined(self, e: EntrantJoined, t: T) -> R:
        return self.other(e, t)

    def entrant_left(self, e: EntrantLeft, t: T) -> R:
        return self.other(e, t)

    def round_started(self, e: RoundStarted, t: T) -> R:
        return self.other(e, t)

    def table_scored(self, e: TableScored, t: T) -> R:
        return self.other(e, t)

    def round_finished(self, e: RoundFinished, t: T) -> R:
        return self.other(e, t)

    def tournament_finished(self, e: TournamentFinished, t: T) -> R:
        return self.other(e, t)

    def tournament_cancelled(self, e: TournamentCancelled, t: T) -> R:
        return self.other(e, t)
