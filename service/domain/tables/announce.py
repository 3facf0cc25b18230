"""What a room is told of each event, in one line, and how seats are named in messages.  Pure."""

from __future__ import annotations

from service.domain.events import (
    BotsAdded,
    Event,
    MatchFinished,
    MatchStarted,
    MovePlayed,
    OptionsChanged,
    PlayerJoined,
    PlayerKicked,
    PlayerLeft,
    RoomAttached,
    SeatTakenByBot,
    TableCancelled,
    TableCreated,
)
from service.domain.identities import Player
from service.domain.tables.state import Table
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


def names(t: Table) -> list[text.Item]:
    """The names of every seat, for drawing a view."""
    return [seat_name(t, i) for i in range(len(t.seats))]


def event_line(after: Table, event: Event) -> text.Item | None:
    """The one-line announcement of an event in a room (None: not announced)."""
    if type(event) is MovePlayed:  # most events: tested first
        return text.t(f"table.moved_{event.cause}", name=seat_name(after, event.seat),
                      move=text.move(after.game, event.move))
    if isinstance(event, TableCreated):
        game = text.t(f"game.{event.game}")
        return text.t("table.created", table=after.id, game=game, seats=event.max_seats)
    if isinstance(event, RoomAttached):
        return text.t("table.room_attached", table=after.id)
    if isinstance(event, PlayerJoined):
        return text.t("table.joined", name=person(event.player), seat=event.seat + 1, seats=after.max_seats)
    if isinstance(event, PlayerLeft):
        return text.t("table.left", name=person(event.player))
    if isinstance(event, BotsAdded):
        return text.t("table.bots_added", n=len(event.seats), level=text.t(f"level.{event.level}"))
    if isinstance(event, MatchStarted):
        return text.t("table.started", players=event.players, commitment=event.commitment)
    if isinstance(event, SeatTakenByBot):
        name = person(event.player) if event.player else str(event.seat + 1)
        return text.t(f"table.bot_took_seat_{event.reason}", name=name)
    if isinstance(event, MatchFinished):
        winners = [seat_name(after, w) for w in event.result.get("winners", [])]
        return text.t("table.finished", winners=text.joined(winners), seed=after.seed or "",
                      commitment=after.commitment or "")
    if isinstance(event, TableCancelled):
        if event.reason in ("empty", "idle"):
            return text.t(f"table.closed_{event.reason}")
        return text.t("table.cancelled", name=person(event.by))
    if isinstance(event, PlayerKicked):
        kicked: text.Item = text.t("table.bot_name", n=event.seat + 1)
        if event.player is not None:
            kicked = person(event.player)
        key = "table.kicked" if event.level is None else "table.kicked_bot"
        return text.t(key, name=kicked, by=person(event.by))
    if isinstance(event, OptionsChanged):
        words = [f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                 for k, v in sorted(event.options.items())]
        return text.t("table.options_changed", options=" ".join(words) or "-", seats=event.max_seats,
                      turn=int(event.turn_seconds) if event.turn_seconds == int(event.turn_seconds)
                      else event.turn_seconds)
    return None
