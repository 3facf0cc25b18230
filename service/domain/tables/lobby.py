"""The lobby's commands, for ``decide``: create a table (``/new``, ``/play``), join, leave, AI
players, start, cancel, kick, set options.  Pure."""

from __future__ import annotations

from typing import Any

import engine
from service.domain.commands import TableCommand
from service.domain.events import (
    BotsAdded,
    MatchStarted,
    OptionsChanged,
    PlayerJoined,
    PlayerKicked,
    PlayerLeft,
    RoomAttached,
    SeatTakenByBot,
    TableCancelled,
    TableCreated,
)
from service.domain.requests import Bots, Create, Join, SetOptions
from service.domain.tables.base import (
    Builder,
    Context,
    Refused,
    commitment,
    require_creator,
    require_seat,
    require_status,
)
from service.domain.tables.state import LOBBY, RUNNING, Table
from service.protocol.i18n.reasons import options_reason

DEFAULT_PLAYERS = 4


def seat_count(game: str, options: dict[str, Any], players: int | None) -> int:
    """The largest number of seats the engine accepts with these options (or check ``players``)."""
    if players is not None:
        try:
            engine.new_game(game, players=players, seed=0, **options)
        except ValueError as e:
            raise Refused("bad_options", reason=options_reason(str(e))) from None
        return players
    last: ValueError | None = None
    for n in range(8, 1, -1):
        try:
            engine.new_game(game, players=n, seed=0, **options)
            return n
        except ValueError as e:
            last = e
    raise Refused("bad_options", reason=options_reason(str(last)))


def idle_deadline(t: Table, idle_s: float) -> float | None:
    """When a lobby nobody changed closes (unix seconds), or None: not a lobby, expiry off (``idle_s``
    0), a tournament's table (its director seats it), or no change time recorded (an older lobby)."""
    if t.status != LOBBY or idle_s <= 0 or t.tournament is not None or t.turn_since <= 0:
        return None
    return t.turn_since + idle_s


def create(b: Builder, cmd: TableCommand, req: Create, ctx: Context) -> None:
    if b.decision.before is not None:
        raise Refused("table_exists", table=cmd.table)
    if cmd.actor is None or cmd.room is None:
        raise Refused("no_actor")
    options = dict(req.options)
    # "turn=<seconds>" is the service's own option (the turn timer), not the engine's.
    turn = options.pop("turn", ctx.turn_seconds)
    if isinstance(turn, bool) or not isinstance(turn, int | float) or turn < 0:
        raise Refused("bad_options", reason=options_reason(f"turn={turn}"))
    players, game = req.players, req.game
    if game not in engine.games():
        raise Refused("bad_options", reason=f"game={game}")
    max_seats = seat_count(game, options, players)
    b.emit(TableCreated(game=game, options=options, max_seats=max_seats, creator=cmd.actor, room=cmd.room,
                        locale=cmd.locale, turn_seconds=float(turn)))
    b.emit(PlayerJoined(seat=0, player=cmd.actor, locale=cmd.locale))
    if req.with_bots:
        n = players if players is not None else min(DEFAULT_PLAYERS, max_seats)
        b.emit(BotsAdded(seats=list(range(1, n)), level=req.level or ctx.bot_level))
        start_match(b, ctx)


def start_match(b: Builder, ctx: Context) -> None:
    seed = ctx.new_seed()
    n = len(b.t.seats)
    try:
        engine.new_game(b.t.game, players=n, seed=0, **b.t.options)
    except ValueError:
        raise Refused("player_count", players=n) from None
    b.emit(MatchStarted(seed=seed, commitment=commitment(seed), players=n))
    b.finish_if_over()


def join(b: Builder, cmd: TableCommand, req: Join) -> None:
    t = b.t
    if req.link and (t.status == RUNNING or t.seat_of(cmd.actor) is not None):
        # A deep link (/start <table>) opened by a seated player: show their hand (or, in the lobby,
        # remind them they are seated); no event.  In a running match it is /hand.
        require_status(t, LOBBY, RUNNING)
        require_seat(t, cmd)
        return
    require_status(t, LOBBY)
    if cmd.actor is None:
        raise Refused("no_actor")
    if t.seat_of(cmd.actor) is not None:
        raise Refused("already_seated", table=t.id)
    if len(t.seats) >= t.max_seats:
        raise Refused("table_full", table=t.id, seats=t.max_seats)
    if cmd.room is not None and not any(cmd.room.same(r) for r in t.rooms):
        b.emit(RoomAttached(room=cmd.room, person=cmd.actor if cmd.room.kind == "private" else None))
    b.emit(PlayerJoined(seat=len(t.seats), player=cmd.actor, locale=cmd.locale))


def leave(b: Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    require_status(t, LOBBY, RUNNING)
    seat = require_seat(t, cmd)
    assert cmd.actor is not None  # require_seat refused a command without one
    if t.status == LOBBY:
        b.emit(PlayerLeft(seat=seat, player=cmd.actor))
        # The last person gone, nobody can start the lobby any more: it closes (and its keys become
        # the retention's to archive and free, like any finished table's).
        if not any(s.human for s in b.t.seats):
            b.emit(TableCancelled(by=cmd.actor, reason="empty"))
    else:
        b.emit(SeatTakenByBot(seat=seat, level=ctx.bot_level, reason="left", player=cmd.actor))


def bots(b: Builder, cmd: TableCommand, req: Bots, ctx: Context) -> None:
    t = b.t
    require_status(t, LOBBY)
    require_creator(t, cmd)
    n = req.n
    if len(t.seats) + n > t.max_seats:
        raise Refused("table_full", table=t.id, seats=t.max_seats)
    level = req.level or ctx.bot_level
    b.emit(BotsAdded(seats=list(range(len(t.seats), len(t.seats) + n)), level=level))


def start(b: Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    require_status(t, LOBBY)
    require_creator(t, cmd)
    start_match(b, ctx)


def cancel(b: Builder, cmd: TableCommand) -> None:
    t = b.t
    require_status(t, LOBBY, RUNNING)
    require_creator(t, cmd)
    assert cmd.actor is not None  # require_creator refused a command without one
    b.emit(TableCancelled(by=cmd.actor))


def kick(b: Builder, cmd: TableCommand, n: Any, ctx: Context) -> None:
    t = b.t
    require_status(t, LOBBY, RUNNING)
    require_creator(t, cmd)
    seat = n - 1 if isinstance(n, int) and not isinstance(n, bool) else -1
    if not 0 <= seat < len(t.seats) or (t.status == RUNNING and not t.seats[seat].human):
        # A running match's AI seat cannot be freed: it would have no one to play it.
        raise Refused("bad_seat", table=t.id, seat=n, seats=len(t.seats))
    assert cmd.actor is not None
    player = t.seats[seat].player if t.seats[seat].human else None
    level = ctx.bot_level if t.status == RUNNING else None
    b.emit(PlayerKicked(seat=seat, player=player, by=cmd.actor, level=level))


def set(b: Builder, cmd: TableCommand, req: SetOptions) -> None:
    t = b.t
    require_status(t, LOBBY)
    require_creator(t, cmd)
    assert cmd.actor is not None
    changes = dict(req.options)
    turn = changes.pop("turn", t.turn_seconds)
    if isinstance(turn, bool) or not isinstance(turn, int | float) or turn < 0:
        raise Refused("bad_options", reason=options_reason(f"turn={turn}"))
    options = {**t.options, **changes}
    players = req.players
    if players is not None:
        max_seats = seat_count(t.game, options, players)
    else:
        try:  # the seats stay as they were if the new options allow them, else the most they allow
            max_seats = seat_count(t.game, options, t.max_seats)
        except Refused:
            max_seats = seat_count(t.game, options, None)
    if max_seats < len(t.seats):
        raise Refused("seats_taken", table=t.id, seated=len(t.seats), seats=max_seats)
    b.emit(OptionsChanged(options=options, max_seats=max_seats, turn_seconds=float(turn), by=cmd.actor))


