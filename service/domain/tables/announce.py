"""What a room is told of each event, in one line (an event visitor: :mod:`service.domain.visitor`),
and how seats are named in messages.  Pure."""

from __future__ import annotations

from service.domain import daily
from service.domain import events as ev
from service.domain.embargo import embargo_of
from service.domain.events import Event
from service.domain.identities import Player
from service.domain.tables.state import Table
from service.domain.visitor import EventVisitor
from service.protocol import text


def person(p: Player) -> str:
    """How a person is called in messages: their display name, else their user id."""
    return p.name or p.user


def seat_name(t: Table, seat: int) -> text.Item:
    """How a seat is called in messages: the person's name, or "AI n"."""
    s = t.seats[seat]
    if s.human and s.player is not None:
        return person(s.player)
    return text.t("table.bot_name", n=seat + 1)


def finished_line(t: Table, shown: bool) -> text.Item:
    """The end of the match: who won, and the deal's seed (the check of the commitment) when
    ``shown``, else only that it comes once the other tables playing the deal have finished (G-1)."""
    winners = text.joined([seat_name(t, w) for w in (t.result or {}).get("winners", [])])
    if not shown:
        e = embargo_of(t)
        if e is not None and e.until is not None:  # a deal of the day: shown when the day's embargo lifts
            return text.t("table.finished_until", winners=winners, commitment=t.commitment or "",
                          reveal=daily.clock_text(e.until))
        return text.t("table.finished_withheld", winners=winners, commitment=t.commitment or "")
    return text.t("table.finished", winners=winners, seed=t.seed or "", commitment=t.commitment or "")


def names(t: Table) -> list[text.Item]:
    """The names of every seat, for drawing a view."""
    return [seat_name(t, i) for i in range(len(t.seats))]


def event_line(after: Table, event: Event) -> text.Item | None:
    """The one-line announcement of an event in a room (None: not announced)."""
    return _LINES.visit(event, after)


class _Lines(EventVisitor[Table, "text.Item | None"]):
    """The room's line of each event, given the table after it."""

    __slots__ = ()

    def other(self, event: Event, t: Table) -> text.Item | None:
        return None

    def move_played(self, e: ev.MovePlayed, t: Table) -> text.Item | None:
        return text.t(f"table.moved_{e.cause}", name=seat_name(t, e.seat), move=text.move(t.game, e.move))

    def rematch_asked(self, e: ev.RematchAsked, t: Table) -> text.Item | None:
        return text.t("table.rematch_asked", name=person(e.by), table=e.table)

    def table_created(self, e: ev.TableCreated, t: Table) -> text.Item | None:
        if e.rematch_of is not None:
            waiting = [person(p) for i in t.waiting_for() if (p := t.seats[i].player) is not None]
            if waiting:
                return text.t("table.rematch_created", table=t.id, of=e.rematch_of,
                              names=text.joined(waiting))
            return text.t("table.rematch_created_all", table=t.id, of=e.rematch_of)
        return text.t("table.created", table=t.id, game=text.t(f"game.{e.game}"), seats=e.max_seats)

    def room_attached(self, e: ev.RoomAttached, t: Table) -> text.Item | None:
        return text.t("table.room_attached", table=t.id)

    def player_joined(self, e: ev.PlayerJoined, t: Table) -> text.Item | None:
        return text.t("table.joined", name=person(e.player), seat=e.seat + 1, seats=t.max_seats)

    def player_left(self, e: ev.PlayerLeft, t: Table) -> text.Item | None:
        return text.t("table.left", name=person(e.player))

    def bots_added(self, e: ev.BotsAdded, t: Table) -> text.Item | None:
        return text.t("table.bots_added", n=len(e.seats), level=text.t(f"level.{e.level}"))

    def match_started(self, e: ev.MatchStarted, t: Table) -> text.Item | None:
        return text.t("table.started", players=e.players, commitment=e.commitment)

    def seat_taken_by_bot(self, e: ev.SeatTakenByBot, t: Table) -> text.Item | None:
        name = person(e.player) if e.player else str(e.seat + 1)
        return text.t(f"table.bot_took_seat_{e.reason}", name=name)

    def match_finished(self, e: ev.MatchFinished, t: Table) -> text.Item | None:
        # Said as it happens: a deal other tables share is still theirs to play (service.domain.embargo).
        return finished_line(t, shown=embargo_of(t) is None)

    def table_cancelled(self, e: ev.TableCancelled, t: Table) -> text.Item | None:
        if e.reason in ("empty", "idle", "expired"):
            return text.t(f"table.closed_{e.reason}")
        return text.t("table.cancelled", name=person(e.by))

    def player_kicked(self, e: ev.PlayerKicked, t: Table) -> text.Item | None:
        kicked: text.Item = text.t("table.bot_name", n=e.seat + 1)
        if e.player is not None:
            kicked = person(e.player)
        key = "table.kicked" if e.level is None else "table.kicked_bot"
        return text.t(key, name=kicked, by=person(e.by))

    def options_changed(self, e: ev.OptionsChanged, t: Table) -> text.Item | None:
        words = [f"{k}={str(v).lower() if isinstance(v, bool) else v}" for k, v in sorted(e.options.items())]
        return text.t("table.options_changed", options=" ".join(words) or "-", seats=e.max_seats,
                      turn=int(e.turn_seconds) if e.turn_seconds == int(e.turn_seconds) else e.turn_seconds)


_LINES = _Lines()
