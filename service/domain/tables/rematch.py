"""A rematch: the same people, options and seats (AI players included) in one press.  Pure; used by
``decide`` and, for the command that makes the rematch, by the worker.

1. A person of a finished table presses "Play again" (their end message's action ``rematch``): the
   finished table records ``RematchAsked`` with the rematch's id, a function of its own (so that every
   press, whoever makes it, names the same table).
2. The worker hands the rematch a :class:`~service.domain.commands.Rematch` command built from the
   finished table (:func:`request`): the first creates it in the same rooms, with the asker seated,
   every AI seat filled at its level and every other person's seat kept for them (``SeatReserved``);
   each of them is asked (an ``accept`` or ``decline`` action), and a later ask by one of them seats
   them.
3. The match starts as soon as nobody is left to answer; a person who declines, or does not answer
   within ``rematch_wait_s``, has their seat taken by an AI player, as a lobby's would be.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from service.domain.commands import TableCommand
from service.domain.events import (
    BotsAdded,
    PlayerJoined,
    RematchAsked,
    RoomAttached,
    SeatReserved,
    SeatTakenByBot,
    TableCreated,
)
from service.domain.identities import Player, Room
from service.domain.requests import Press, Rematch
from service.domain.tables.base import Builder, Context, Refused, require_status
from service.domain.tables.lobby import start_match
from service.domain.tables.state import FINISHED, LOBBY, Table

REMATCH, ACCEPT, DECLINE = "rematch", "accept", "decline"
ANSWERS = (ACCEPT, DECLINE)


def table_id(finished: str) -> str:
    """The rematch of table ``finished``: the same id for every press (10 characters, as a table's)."""
    digest = hashlib.sha256(f"rematch:{finished}".encode()).digest()
    return base64.b32encode(digest[:10]).decode()[:10].lower()


def offered(t: Table) -> bool:
    """Whether the table's end offers a rematch (not a tournament's: its director seats the rounds)."""
    return t.status == FINISHED and t.tournament is None and t.embargo is None


def ask(b: Builder, cmd: TableCommand, req: Press) -> None:
    """A person of the finished table asks for the rematch (their seat's ``rematch`` action)."""
    t = b.t
    require_status(t, FINISHED)
    if not offered(t):
        raise Refused("no_rematch", table=t.id)
    seat = req.seat if req.seat is not None and 0 <= req.seat < len(t.seats) else -1
    player = t.seats[seat].player if seat >= 0 else None
    if player is None or cmd.actor is None or not cmd.actor.same(player):
        raise Refused("wrong_seat", table=t.id)  # a person's own seat only (an AI took it over: still)
    if any(p.same(cmd.actor) for p in t.rematch_by):
        return  # asked already: the worker hands the rematch the ask again (it seats them once)
    b.emit(RematchAsked(by=player, table=table_id(t.id)))


def request(t: Table, by: Player) -> Rematch:
    """The command that makes (or, for a later ask, joins) the rematch of finished table ``t``."""
    seats: list[dict[str, Any]] = []
    for s in t.seats:
        if s.player is not None:  # a person's seat, even one an AI player took over: theirs again
            seats.append({"player": s.player.model_dump(), "locale": s.locale})
        else:
            seats.append({"bot": s.bot or "medium"})
    people = [t.person_of(i) for i in range(len(t.rooms))]
    return Rematch(name="rematch", of=t.id, game=t.game, options=dict(t.options), turn_seconds=t.turn_seconds,
                   seats=seats, rooms=list(t.rooms), room_people=people)


def make_or_join(b: Builder, cmd: TableCommand, req: Rematch, ctx: Context) -> None:
    """The rematch command: create the rematch (the first ask), or seat a later asker."""
    if b.decision.before is not None:
        _accept(b, cmd, b.t.invited_seat(cmd.actor))
        _start_if_ready(b, ctx)
        return
    people = [Player.model_validate(s["player"]) if "player" in s else None for s in req.seats]
    actor = cmd.actor
    mine = next((i for i, p in enumerate(people) if p is not None and actor is not None and p.same(actor)),
                None)
    if mine is None or not req.rooms:
        raise Refused("wrong_seat", table=cmd.table)
    asker = people[mine]
    assert asker is not None
    rooms = [Room.model_validate(r) if isinstance(r, dict) else r for r in req.rooms]
    b.emit(TableCreated(game=req.game, options=dict(req.options), max_seats=len(req.seats), creator=asker,
                        room=rooms[0], locale=cmd.locale, turn_seconds=req.turn_seconds, rematch_of=req.of))
    people_of = list(req.room_people) + [None] * len(rooms)
    for room, person in zip(rooms[1:], people_of[1:], strict=False):
        b.emit(RoomAttached(room=room, person=person))
    for i, (seat, person) in enumerate(zip(req.seats, people, strict=True)):
        if person is None:
            b.emit(BotsAdded(seats=[i], level=str(seat.get("bot") or ctx.bot_level)))
        elif i == mine:
            b.emit(PlayerJoined(seat=i, player=person, locale=cmd.locale))
        else:
            b.emit(SeatReserved(seat=i, player=person, locale=str(seat.get("locale") or "es")))
    _start_if_ready(b, ctx)


def answer(b: Builder, cmd: TableCommand, req: Press, ctx: Context) -> None:
    """An invited person's ``accept`` or ``decline`` (the action of the invitation they were sent)."""
    t = b.t
    require_status(t, LOBBY)
    if t.rematch_of is None:
        raise Refused("no_rematch", table=t.id)
    seat = t.invited_seat(cmd.actor)
    if seat is None or seat != req.seat:
        if t.seat_of(cmd.actor) is not None:
            raise Refused("already_seated", table=t.id)
        raise Refused("wrong_seat", table=t.id)
    if req.move == ACCEPT:
        _accept(b, cmd, seat)
    else:
        b.emit(SeatTakenByBot(seat=seat, level=ctx.bot_level, reason="declined", player=t.seats[seat].player))
    _start_if_ready(b, ctx)


def _accept(b: Builder, cmd: TableCommand, seat: int | None) -> None:
    t = b.t
    if t.status != LOBBY:
        return  # started already (everyone answered, or the wait ran out): nothing to join
    if seat is None:
        if t.seat_of(cmd.actor) is not None:
            return  # seated already: a second ask changes nothing
        raise Refused("wrong_seat", table=t.id)
    player = t.seats[seat].player
    assert player is not None
    b.emit(PlayerJoined(seat=seat, player=player, locale=cmd.locale))


def join(b: Builder, cmd: TableCommand, ctx: Context) -> None:
    """``/join`` (a lobby's Join button) by a person whose seat the rematch keeps: they accept."""
    _accept(b, cmd, b.t.invited_seat(cmd.actor))
    _start_if_ready(b, ctx)


def leave(b: Builder, cmd: TableCommand, ctx: Context) -> None:
    """``/leave`` by a person whose seat the rematch keeps: they decline."""
    t = b.t
    seat = t.invited_seat(cmd.actor)
    assert seat is not None
    b.emit(SeatTakenByBot(seat=seat, level=ctx.bot_level, reason="declined", player=t.seats[seat].player))
    _start_if_ready(b, ctx)


def no_answer(b: Builder, ctx: Context) -> None:
    """The wait ran out: the seats of those who did not answer go to AI players, and the match starts."""
    t = b.t
    for seat in t.waiting_for():
        who = t.seats[seat].player
        b.emit(SeatTakenByBot(seat=seat, level=ctx.bot_level, reason="no_answer", player=who))
    _start_if_ready(b, ctx)


def deadline(t: Table, wait_s: float) -> float | None:
    """When a rematch's wait for answers runs out (unix seconds), or None (not a rematch waiting)."""
    if t.status != LOBBY or t.rematch_of is None or not t.waiting_for():
        return None
    return t.turn_since + wait_s


def _start_if_ready(b: Builder, ctx: Context) -> None:
    t = b.t
    if t.status == LOBBY and t.rematch_of is not None and not t.waiting_for():
        start_match(b, ctx)
