"""``decide``: what a command does to a table — the events it causes, or a refusal.  Pure.

Time, the match seed, the AI players' choice and the token secrets come in through
:class:`Context`, so every branch can be tested without Redis, a clock or randomness.  ``decide``
matches the command's typed request (:mod:`service.domain.commands`); the lobby's commands are in
:mod:`service.domain.tables.lobby`, what every branch shares in :mod:`service.domain.tables.base`,
the match's (moves, actions, ticks) here.
"""

from __future__ import annotations

from typing import Literal

import engine
from service.domain.commands import TableCommand
from service.domain.embargo import deal_shown
from service.domain.events import (
    SeatTakenByBot,
    TableCancelled,
    move_played,
)
from service.domain.requests import (
    Bots,
    Create,
    DailyTable,
    Join,
    Kick,
    Move,
    Plain,
    Press,
    Rematch,
    SeatTable,
    SetOptions,
    Tick,
    Unknown,
)
from service.domain.tables import daily_table, lobby, rematch
from service.domain.tables.base import (
    Builder,
    Context,
    Decision,
    Refused,
    bot_seed,
    commitment,
    require_creator,
    require_seat,
    require_status,
)
from service.domain.tables.seating import seat_table
from service.domain.tables.state import FINISHED, RUNNING, Table
from service.domain.tokens import TokenError, open_token
from service.protocol import chats

__all__ = ["Context", "Decision", "Refused", "bot_seed", "commitment", "decide", "only_pass"]


def only_pass(t: Table, auto_pass_s: float) -> bool:
    """Whether the service passes for the person to move: their only move is to pass and passes are
    made for people (``auto_pass_s`` > 0).  A forced pass is the same for everyone, whatever the
    platform they play on."""
    if auto_pass_s <= 0 or t.status != RUNNING:
        return False
    mover = t.to_move()
    return mover is not None and t.seats[mover].human and engine.legal_moves(t.engine) == ["pass"]


def decide(table: Table | None, cmd: TableCommand, ctx: Context) -> Decision:
    """The events ``cmd`` causes on ``table`` (None: no such table yet); raises :class:`Refused`."""
    req = cmd.request
    if isinstance(req, Unknown) and req.error is None:
        raise Refused("unknown_command", command=cmd.name)
    if cmd.room is not None and not chats.allowed(cmd.name, cmd.room.kind):
        # The gateway's parser checks the same table; this holds for a command that came another way.
        raise Refused("wrong_chat", command=cmd.name, chat=cmd.room.kind)
    if table is None and not cmd.creates_table:
        raise Refused("no_table", table=cmd.table)
    if daily_table.day_of_table(table) is not None:
        assert table is not None
        daily_table.check(table, cmd, ctx)  # a deal of the day's table: its seats and deal are fixed
    b = Builder(table, cmd.table, ctx.now)
    match req:
        case Create():
            lobby.create(b, cmd, req, ctx)
        case Join() if table is not None and table.invited_seat(cmd.actor) is not None:
            rematch.join(b, cmd, ctx)  # a rematch's person takes the seat kept for them
        case Join():
            lobby.join(b, cmd, req)
        case Bots():
            lobby.bots(b, cmd, req, ctx)
        case Kick():
            lobby.kick(b, cmd, req.seat, ctx)
        case SetOptions():
            lobby.set(b, cmd, req)
        case Move():
            _move(b, cmd, req)
        case Tick():
            _tick(b, req, ctx)
        case SeatTable():
            seat_table(b, cmd, req)
        case DailyTable():
            daily_table.daily_table(b, cmd, req, ctx)
        case Rematch():
            rematch.make_or_join(b, cmd, req, ctx)
        case Plain(name="leave") if table is not None and table.invited_seat(cmd.actor) is not None:
            rematch.leave(b, cmd, ctx)  # declined
        case Plain(name="leave"):
            lobby.leave(b, cmd, ctx)
        case Plain(name="start") if table is not None and table.rematch_of and table.waiting_for():
            require_creator(table, cmd)
            rematch.no_answer(b, ctx)  # start now: the seats still waiting go to AI players
        case Plain(name="start"):
            lobby.start(b, cmd, ctx)
        case Plain(name="cancel"):
            lobby.cancel(b, cmd)
        case Press():
            _action(b, cmd, req, ctx)
        case Plain(name="hand"):
            _hand(b, cmd)
        case Plain(name="replay"):
            _replay(b, ctx)
        case Unknown(name="kick"):  # a seat that is not a number
            lobby.kick(b, cmd, req.args.get("seat"), ctx)
        case _:  # the arguments do not have the command's shape
            raise Refused("bad_options", reason=f"{cmd.name}: {getattr(req, 'error', '')}")
    return b.decision


def _play_move(b: Builder, seat: int, move: str, cause: Literal["player", "bot", "timeout", "auto"]) -> None:
    try:
        b.emit(move_played(seat, move, cause))
    except engine.IllegalMove as e:
        raise Refused("illegal", illegal=e.code, **e.params) from None
    b.finish_if_over()


def _move(b: Builder, cmd: TableCommand, req: Move) -> None:
    t = b.t
    require_status(t, RUNNING)
    seat = require_seat(t, cmd)
    if t.to_move() != seat:
        raise Refused("not_your_turn", table=t.id)
    _play_move(b, seat, req.move, "player")


def _action(b: Builder, cmd: TableCommand, req: Press, ctx: Context) -> None:
    if req.move == rematch.REMATCH and req.seat is not None:
        rematch.ask(b, cmd, req)  # the end's "Play again": any version of the finished table
        return
    if req.move in rematch.ANSWERS and req.seat is not None:
        rematch.answer(b, cmd, req, ctx)  # a rematch's invitation, answered while it waits
        return
    if req.move is None or req.seat is None or req.version is None:
        # Written before the gateway opened tokens itself: the token travels in the command.
        try:
            claims = open_token(ctx.token_secrets, cmd.token or "")
        except TokenError as e:
            raise Refused(f"token_{e.code}") from None
        if claims.table != cmd.table:
            raise Refused("token_forged")
        req = Press(name="action", seat=claims.seat, version=claims.version, move=claims.move)
    t = b.t
    require_status(t, RUNNING)
    seat = require_seat(t, cmd)
    if req.seat != seat:
        raise Refused("wrong_seat", table=t.id)
    if req.version != t.version:
        raise Refused("stale_token", table=t.id)
    if t.to_move() != seat:
        raise Refused("not_your_turn", table=t.id)
    assert req.move is not None
    _play_move(b, seat, req.move, "player")


def _hand(b: Builder, cmd: TableCommand) -> None:
    # No event: the notifier sends the hand again (a reply-only command).
    require_status(b.t, RUNNING)
    require_seat(b.t, cmd)


def _replay(b: Builder, ctx: Context) -> None:
    # No event: the worker reads the whole stream and the notifier sends the replay.
    if b.t.status != FINISHED:
        raise Refused("not_finished", table=b.t.id)
    if not deal_shown(b.t, b.t.id in ctx.lifted):
        # Its deal is shared (a tournament round's): other tables may still be playing it (G-1).
        raise Refused("deal_embargoed", table=b.t.id)


def _tick(b: Builder, req: Tick, ctx: Context) -> None:
    """A deadline fired for the table at ``req.version``: an AI seat's turn, or a turn timer."""
    t = b.t
    if daily_table.expire(b, ctx):  # a daily attempt unfinished when its day's deal may be shown
        return
    waited = rematch.deadline(t, ctx.rematch_wait_s)
    if waited is not None and req.version == t.version and ctx.now >= waited:
        rematch.no_answer(b, ctx)  # a rematch's people did not all answer in time
        return
    closes = lobby.idle_deadline(t, ctx.lobby_idle_s)
    if closes is not None and req.version == t.version and ctx.now >= closes:
        b.emit(TableCancelled(by=t.creator, reason="idle"))  # a lobby forgotten for lobby_idle_s
        return
    if t.status != RUNNING or req.version != t.version:
        return  # stale: the table moved on since the deadline was set; nothing to do
    seat_no = t.to_move()
    assert seat_no is not None
    seat = t.seats[seat_no]
    view = engine.view(t.engine, seat_no)
    if not seat.human:
        _play_move(b, seat_no, ctx.choose_move(view, seat.bot or ctx.bot_level, bot_seed(t)), "bot")
        return
    if only_pass(t, ctx.auto_pass_s) and ctx.now >= t.turn_since + ctx.auto_pass_s:
        _play_move(b, seat_no, "pass", "auto")  # the only move: neither a timeout nor the player's
        return
    if t.turn_seconds <= 0 or ctx.now < t.turn_since + t.turn_seconds:
        return  # the player still has time
    _play_move(b, seat_no, ctx.choose_move(view, ctx.bot_level, bot_seed(t)), "timeout")
    after = b.t
    if after.status == RUNNING and after.seats[seat_no].timeouts >= ctx.timeouts_to_bot:
        b.emit(SeatTakenByBot(seat=seat_no, level=ctx.bot_level, reason="timeouts",
                              player=after.seats[seat_no].player))
