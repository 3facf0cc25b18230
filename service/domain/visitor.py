"""One dispatch on the type of an event, for the folds and for every projection of them.  Pure.

:class:`Visitor` is the dispatch itself, for the events of any aggregate: a method per event type,
named after it.  Every reader of a table's events is an :class:`EventVisitor`: the fold itself
(:func:`service.domain.tables.state.evolve`), the line a room is told of each event
(:mod:`service.domain.tables.announce`) and the derived indexes (:mod:`service.write.projection`,
which the worker applies after each append, ``cinq reindex`` folds from nothing and ``cinq trim``
undoes).  A reader has one method per event type it handles and says once, in :meth:`other`, what
the rest give; which method an event goes to is decided here alone, so that a new event type is a
method in each reader (``tests/service/domain/test_events.py`` checks that every type has one) and no
reader keeps its own chain of type tests.  A tournament's fold is a visitor of its own events in the
same way (:class:`service.tournaments.state.TournamentVisitor`).
"""

from __future__ import annotations

import re
from typing import Generic, TypeVar

from service.domain import events as ev

T = TypeVar("T")
R = TypeVar("R")


def method_name(cls: type[ev.Event]) -> str:
    """The visitor method of an event type: its name in snake case (``MovePlayed``: ``move_played``)."""
    return re.sub(r"(?<!^)(?=[A-Z])", "_", cls.__name__).lower()


# The method of every event type, the tables' named at once, any other aggregate's when first seen.
_METHOD: dict[type[ev.Event], str] = {cls: method_name(cls) for cls in ev.EVENT_TYPES.values()}


class Visitor(Generic[T, R]):
    """A reader of events: ``visit(event, t)`` calls the method of the event's type with ``t`` (the
    reader's context: the aggregate before the event for a fold, after it for a projection)."""

    __slots__ = ()

    def visit(self, event: ev.Event, t: T) -> R:
        """What this reader makes of ``event``."""
        cls = type(event)
        name = _METHOD.get(cls)
        if name is None:
            name = _METHOD[cls] = method_name(cls)
        method = getattr(self, name, None)
        if method is None:
            return self.other(event, t)
        result: R = method(event, t)
        return result

    def other(self, event: ev.Event, t: T) -> R:
        """What an event this reader does not handle gives (by default: it is a bug)."""
        raise ValueError(f"unknown event {type(event).__name__}")


class EventVisitor(Visitor[T, R]):
    """A reader of a table's events: every method not overridden gives :meth:`other`."""

    __slots__ = ()

    # One method per event type of events.EVENT_TYPES: each gives other() unless a reader overrides it.

    def table_created(self, e: ev.TableCreated, t: T) -> R:
        return self.other(e, t)

    def room_attached(self, e: ev.RoomAttached, t: T) -> R:
        return self.other(e, t)

    def player_joined(self, e: ev.PlayerJoined, t: T) -> R:
        return self.other(e, t)

    def player_left(self, e: ev.PlayerLeft, t: T) -> R:
        return self.other(e, t)

    def bots_added(self, e: ev.BotsAdded, t: T) -> R:
        return self.other(e, t)

    def match_started(self, e: ev.MatchStarted, t: T) -> R:
        return self.other(e, t)

    def move_played(self, e: ev.MovePlayed, t: T) -> R:
        return self.other(e, t)

    def seat_taken_by_bot(self, e: ev.SeatTakenByBot, t: T) -> R:
        return self.other(e, t)

    def match_finished(self, e: ev.MatchFinished, t: T) -> R:
        return self.other(e, t)

    def table_cancelled(self, e: ev.TableCancelled, t: T) -> R:
        return self.other(e, t)

    def player_kicked(self, e: ev.PlayerKicked, t: T) -> R:
        return self.other(e, t)

    def options_changed(self, e: ev.OptionsChanged, t: T) -> R:
        return self.other(e, t)

    def rematch_asked(self, e: ev.RematchAsked, t: T) -> R:
        return self.other(e, t)

    def seat_reserved(self, e: ev.SeatReserved, t: T) -> R:
        return self.other(e, t)
