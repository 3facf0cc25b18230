"""What a decision's events mean for who is told what, read in one pass (an event visitor, as the
fold is: :mod:`service.domain.visitor`).  Pure; used by :mod:`service.domain.tables.notify`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from service.domain import daily
from service.domain import events as ev
from service.domain.events import Event
from service.domain.identities import Player
from service.domain.tables.state import Table
from service.domain.visitor import EventVisitor
from service.protocol import text


@dataclass
class Effects:
    """The events' effects on the messages: whether the match ``started`` or ``finished``, the seats
    that ``moved``, the seats an AI player took from a person (``replaced``), and the private
    ``notices`` to send last, in the events' order: (to whom, in which locale, what)."""

    started: bool = False
    finished: bool = False
    moved: set[int] = field(default_factory=set)
    replaced: set[int] = field(default_factory=set)
    invited: list[int] = field(default_factory=list)  # a rematch's seats kept for their people
    notices: list[tuple[Player, str, text.Item]] = field(default_factory=list)


def effects(t: Table, events: Sequence[Event], locale_of: Callable[[int], str]) -> Effects:
    """The effects of ``events`` (``t``: the table after them; ``locale_of(seat)``: the language a
    seated person is told things in)."""
    reader = _Reader(locale_of)
    for e in events:
        reader.visit(e, t)
    return reader.found


class _Reader(EventVisitor[Table, None]):
    __slots__ = ("found", "locale_of")

    def __init__(self, locale_of: Callable[[int], str]) -> None:
        self.found, self.locale_of = Effects(), locale_of

    def other(self, event: Event, t: Table) -> None:
        return None

    def match_started(self, e: ev.MatchStarted, t: Table) -> None:
        self.found.started = True

    def match_finished(self, e: ev.MatchFinished, t: Table) -> None:
        self.found.finished = True

    def move_played(self, e: ev.MovePlayed, t: Table) -> None:
        self.found.moved.add(e.seat)
        # The person whose turn the timer played is told so in private.
        player = t.seats[e.seat].player
        if e.cause == "timeout" and player is not None:
            self.found.notices.append((player, self.locale_of(e.seat),
                                       text.t("table.you_timed_out", move=text.move(t.game, e.move))))

    def seat_taken_by_bot(self, e: ev.SeatTakenByBot, t: Table) -> None:
        if e.player is None:
            return
        if e.reason in ("declined", "no_answer"):
            # A rematch's seat its person turned down (or let pass) before the deal: they never held
            # its hand, so they are sent none (G-1), and the table may be still in its lobby.
            return
        self.found.replaced.add(e.seat)
        if e.reason == "timeouts":  # ...and when they lose the seat for it
            self.found.notices.append((e.player, t.seats[e.seat].locale, text.t("table.you_were_replaced")))

    def table_cancelled(self, e: ev.TableCancelled, t: Table) -> None:
        found = daily.daily_of(t.embargo)
        if e.reason == "expired" and found is not None:  # a daily attempt closed unfinished: say so
            game, day = found
            self.found.notices.append((t.creator, self.locale_of(0), text.t(
                "daily.closed", game=text.t(f"game.{game}"), day=daily.day_name(day))))

    def seat_reserved(self, e: ev.SeatReserved, t: Table) -> None:
        self.found.invited.append(e.seat)

    def player_kicked(self, e: ev.PlayerKicked, t: Table) -> None:
        if e.level is not None and e.player is not None:  # an AI player took the seat over
            self.found.replaced.add(e.seat)
