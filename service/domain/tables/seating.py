"""A tournament's table, opened, seated and started at once (the ``tournament_table`` command,
:class:`~service.domain.commands.SeatTable`, which only the tournament director sends: no chat
command or button produces it)."""

from __future__ import annotations

from service.domain.commands import TableCommand
from service.domain.events import BotsAdded, Event, MatchStarted, PlayerJoined, TableCreated
from service.domain.identities import Player
from service.domain.requests import SeatTable
from service.domain.tables.base import Builder, Refused, commitment


def tournament_table_events(cmd: TableCommand, req: SeatTable) -> list[Event]:
    """A table of a tournament round, created in its group (``cmd.room``), every seat taken as the
    draw says (a person, or an AI player), and started on the round's seed: every table of the round
    deals the same cards (duplicate deals), and all show the same commitment."""
    assert cmd.actor is not None and cmd.room is not None
    events: list[Event] = [TableCreated(game=req.game, options=dict(req.options), max_seats=len(req.seats),
                                        creator=cmd.actor, room=cmd.room, locale=cmd.locale,
                                        turn_seconds=float(req.turn_seconds), tournament=req.tournament)]
    for i, s in enumerate(req.seats):
        if "bot" in s:
            events.append(BotsAdded(seats=[i], level=str(s["bot"])))
        else:
            events.append(PlayerJoined(seat=i, player=Player.model_validate(s["player"]),
                                       locale=str(s.get("locale", cmd.locale))))
    events.append(MatchStarted(seed=req.seed, commitment=commitment(req.seed), players=len(req.seats)))
    return events


def seat_table(b: Builder, cmd: TableCommand, req: SeatTable) -> None:
    """Decide a ``tournament_table`` command."""
    if b.decision.before is not None:
        raise Refused("table_exists", table=cmd.table)
    if cmd.actor is None or cmd.room is None:
        raise Refused("no_actor")
    for event in tournament_table_events(cmd, req):
        b.emit(event)
    b.finish_if_over()
