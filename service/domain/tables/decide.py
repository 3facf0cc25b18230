"""``decide``: what a command does to a table — the events it causes, or a refusal.  Pure.

Time, the match seed, the AI players' choice and the token secrets come in through
:class:`Context`, so every branch can be tested without Redis, a clock or randomness.
"""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import engine
from service.domain import chats
from service.domain.commands import TableCommand
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
from service.domain.tables.seating import tournament_table_events
from service.domain.tables.state import FINISHED, LOBBY, RUNNING, Table, evolve
from service.domain.tokens import TokenError, open_token

DEFAULT_PLAYERS = 4


class Refused(Exception):
    """A command the table does not accept; ``code`` is translated as ``refusal.<code>``."""

    def __init__(self, code: str, *, illegal: str | None = None, **params: Any) -> None:
        super().__init__(code, params)
        self.code = code
        self.illegal = illegal  # the engine's IllegalMove code, for code "illegal"
        self.params = params


@dataclass(frozen=True)
class Context:
    """What ``decide`` needs from the outside world."""

    now: float
    new_seed: Callable[[], str]
    choose_move: Callable[[dict[str, Any], str, int], str]
    token_secrets: Sequence[bytes] = ()
    turn_seconds: float = 60.0
    timeouts_to_bot: int = 3
    bot_level: str = "easy"


@dataclass
class Decision:
    """The events a command caused and the table after them (``before`` is None for a new table)."""

    before: Table | None
    after: Table | None
    events: list[Event] = field(default_factory=list)


def commitment(seed: str) -> str:
    """The public commitment to a seed: SHA-256 of its UTF-8 text, in hex."""
    return hashlib.sha256(seed.encode()).hexdigest()


def bot_seed(table: Table) -> int:
    """The AI player's random seed for the table's current turn (reproducible, and not the deal seed)."""
    return zlib.crc32(f"{table.id}:{table.version}".encode())


class _Builder:
    """Folds events as ``decide`` emits them, so each step sees the state the previous one made."""

    def __init__(self, table: Table | None, table_id: str, now: float) -> None:
        self.decision = Decision(before=table, after=table)
        self.table_id, self.now = table_id, now

    @property
    def t(self) -> Table:
        assert self.decision.after is not None
        return self.decision.after

    def emit(self, event: Event) -> None:
        self.decision.after = evolve(self.decision.after, event, table_id=self.table_id, at=self.now)
        self.decision.events.append(event)

    def finish_if_over(self) -> None:
        if engine.to_move(self.t.engine) is None:
            self.emit(MatchFinished(result=engine.result(self.t.engine) or {}))


def decide(table: Table | None, cmd: TableCommand, ctx: Context) -> Decision:
    """The events ``cmd`` causes on ``table`` (None: no such table yet); raises :class:`Refused`."""
    handler = _HANDLERS.get(cmd.name)
    if handler is None:
        raise Refused("unknown_command", command=cmd.name)
    if cmd.room is not None and not chats.allowed(cmd.name, cmd.room.kind):
        # The gateway's parser checks the same table; this holds for a command that came another way.
        raise Refused("wrong_chat", command=cmd.name, chat=cmd.room.kind)
    if table is None and not cmd.creates_table:
        raise Refused("no_table", table=cmd.table)
    b = _Builder(table, cmd.table, ctx.now)
    handler(b, cmd, ctx)
    return b.decision


def _seat_count(game: str, options: dict[str, Any], players: int | None) -> int:
    """The largest number of seats the engine accepts with these options (or check ``players``)."""
    if players is not None:
        try:
            engine.new_game(game, players=players, seed=0, **options)
        except ValueError as e:
            raise Refused("bad_options", reason=str(e)) from None
        return players
    last: ValueError | None = None
    for n in range(8, 1, -1):
        try:
            engine.new_game(game, players=n, seed=0, **options)
            return n
        except ValueError as e:
            last = e
    raise Refused("bad_options", reason=str(last))


def _create(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    if b.decision.before is not None:
        raise Refused("table_exists", table=cmd.table)
    if cmd.actor is None or cmd.room is None:
        raise Refused("no_actor")
    options = dict(cmd.args.get("options") or {})
    # "turn=<seconds>" is the service's own option (the turn timer), not the engine's.
    turn = options.pop("turn", ctx.turn_seconds)
    if isinstance(turn, bool) or not isinstance(turn, int | float) or turn < 0:
        raise Refused("bad_options", reason=f"turn={turn}")
    players = cmd.args.get("players")
    game = cmd.args.get("game", "")
    if game not in engine.games():
        raise Refused("bad_options", reason=f"game={game}")
    max_seats = _seat_count(game, options, players)
    b.emit(TableCreated(game=game, options=options, max_seats=max_seats, creator=cmd.actor, room=cmd.room,
                        locale=cmd.locale, turn_seconds=float(turn)))
    b.emit(PlayerJoined(seat=0, player=cmd.actor, locale=cmd.locale))
    if cmd.name == "play":
        n = players if players is not None else min(DEFAULT_PLAYERS, max_seats)
        b.emit(BotsAdded(seats=list(range(1, n)), level=ctx.bot_level))
        _start_match(b, ctx)


def _start_match(b: _Builder, ctx: Context) -> None:
    seed = ctx.new_seed()
    n = len(b.t.seats)
    try:
        engine.new_game(b.t.game, players=n, seed=0, **b.t.options)
    except ValueError:
        raise Refused("player_count", players=n) from None
    b.emit(MatchStarted(seed=seed, commitment=commitment(seed), players=n))
    b.finish_if_over()


def _require_status(t: Table, *wanted: str) -> None:
    if t.status in wanted:
        return
    if t.status == LOBBY:
        raise Refused("not_started", table=t.id)
    if t.status == RUNNING:
        raise Refused("already_started", table=t.id)
    if t.status == FINISHED:
        raise Refused("table_finished", table=t.id)
    raise Refused("table_cancelled", table=t.id)


def _require_creator(t: Table, cmd: TableCommand) -> None:
    """The table's creator, or a moderator of the room (a group admin, as the adapter says)."""
    if cmd.actor is None:
        raise Refused("not_creator", table=t.id)
    if cmd.actor.same(t.creator):
        return
    if cmd.moderator and cmd.room is not None and cmd.room.kind == "group" \
            and any(cmd.room.same(r) for r in t.rooms):
        return
    raise Refused("not_creator", table=t.id)


def _require_seat(t: Table, cmd: TableCommand) -> int:
    seat = t.seat_of(cmd.actor)
    if seat is None:
        raise Refused("not_seated", table=t.id)
    return seat


def _join(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    if cmd.args.get("link") and (t.status == RUNNING or t.seat_of(cmd.actor) is not None):
        # A deep link (/start <table>) opened by a seated player: show their hand (or, in the lobby,
        # remind them they are seated); no event.  In a running match it is /hand.
        _require_status(t, LOBBY, RUNNING)
        _require_seat(t, cmd)
        return
    _require_status(t, LOBBY)
    if cmd.actor is None:
        raise Refused("no_actor")
    if t.seat_of(cmd.actor) is not None:
        raise Refused("already_seated", table=t.id)
    if len(t.seats) >= t.max_seats:
        raise Refused("table_full", table=t.id, seats=t.max_seats)
    if cmd.room is not None and not any(cmd.room.same(r) for r in t.rooms):
        b.emit(RoomAttached(room=cmd.room))
    b.emit(PlayerJoined(seat=len(t.seats), player=cmd.actor, locale=cmd.locale))


def _leave(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    _require_status(t, LOBBY, RUNNING)
    seat = _require_seat(t, cmd)
    assert cmd.actor is not None  # _require_seat refused a command without one
    if t.status == LOBBY:
        b.emit(PlayerLeft(seat=seat, player=cmd.actor))
        # The last person gone, nobody can start the lobby any more: it closes (and its keys become
        # the retention's to archive and free, like any finished table's).
        if not any(s.human for s in b.t.seats):
            b.emit(TableCancelled(by=cmd.actor, reason="empty"))
    else:
        b.emit(SeatTakenByBot(seat=seat, level=ctx.bot_level, reason="left", player=cmd.actor))


def _bots(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    _require_status(t, LOBBY)
    _require_creator(t, cmd)
    n = int(cmd.args.get("n", 1))
    if len(t.seats) + n > t.max_seats:
        raise Refused("table_full", table=t.id, seats=t.max_seats)
    level = cmd.args.get("level") or ctx.bot_level
    b.emit(BotsAdded(seats=list(range(len(t.seats), len(t.seats) + n)), level=level))


def _start(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    _require_status(t, LOBBY)
    _require_creator(t, cmd)
    _start_match(b, ctx)


def _cancel(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    _require_status(t, LOBBY, RUNNING)
    _require_creator(t, cmd)
    assert cmd.actor is not None  # _require_creator refused a command without one
    b.emit(TableCancelled(by=cmd.actor))


def _kick(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    _require_status(t, LOBBY, RUNNING)
    _require_creator(t, cmd)
    n = cmd.args.get("seat")
    seat = n - 1 if isinstance(n, int) and not isinstance(n, bool) else -1
    if not 0 <= seat < len(t.seats) or (t.status == RUNNING and not t.seats[seat].human):
        # A running match's AI seat cannot be freed: it would have no one to play it.
        raise Refused("bad_seat", table=t.id, seat=n, seats=len(t.seats))
    assert cmd.actor is not None
    player = t.seats[seat].player if t.seats[seat].human else None
    level = ctx.bot_level if t.status == RUNNING else None
    b.emit(PlayerKicked(seat=seat, player=player, by=cmd.actor, level=level))


def _set(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    _require_status(t, LOBBY)
    _require_creator(t, cmd)
    assert cmd.actor is not None
    changes = dict(cmd.args.get("options") or {})
    turn = changes.pop("turn", t.turn_seconds)
    if isinstance(turn, bool) or not isinstance(turn, int | float) or turn < 0:
        raise Refused("bad_options", reason=f"turn={turn}")
    options = {**t.options, **changes}
    players = cmd.args.get("players")
    if players is not None:
        max_seats = _seat_count(t.game, options, players)
    else:
        try:  # the seats stay as they were if the new options allow them, else the most they allow
            max_seats = _seat_count(t.game, options, t.max_seats)
        except Refused:
            max_seats = _seat_count(t.game, options, None)
    if max_seats < len(t.seats):
        raise Refused("seats_taken", table=t.id, seated=len(t.seats), seats=max_seats)
    b.emit(OptionsChanged(options=options, max_seats=max_seats, turn_seconds=float(turn), by=cmd.actor))


def _play_move(b: _Builder, seat: int, move: str, cause: Literal["player", "bot", "timeout"]) -> None:
    try:
        b.emit(MovePlayed(seat=seat, move=move, cause=cause))
    except engine.IllegalMove as e:
        raise Refused("illegal", illegal=e.code, **e.params) from None
    b.finish_if_over()


def _move(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    _require_status(t, RUNNING)
    seat = _require_seat(t, cmd)
    if t.to_move() != seat:
        raise Refused("not_your_turn", table=t.id)
    _play_move(b, seat, str(cmd.args.get("move", "")), "player")


def _action(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    try:
        claims = open_token(ctx.token_secrets, cmd.token or "")
    except TokenError as e:
        raise Refused(f"token_{e.code}") from None
    t = b.t
    if claims.table != t.id:
        raise Refused("token_forged")
    _require_status(t, RUNNING)
    seat = _require_seat(t, cmd)
    if claims.seat != seat:
        raise Refused("wrong_seat", table=t.id)
    if claims.version != t.version:
        raise Refused("stale_token", table=t.id)
    if t.to_move() != seat:
        raise Refused("not_your_turn", table=t.id)
    _play_move(b, seat, claims.move, "player")


def _hand(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    # No event: the notifier sends the hand again (a reply-only command).
    _require_status(b.t, RUNNING)
    _require_seat(b.t, cmd)


def _replay(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    # No event: the worker reads the whole stream and the notifier sends the replay.
    if b.t.status != FINISHED:
        raise Refused("not_finished", table=b.t.id)
    if b.t.tournament is not None:
        # Its deal is the round's: other tables may still be playing it (G-1).
        raise Refused("tournament_replay", table=b.t.id)


def _tournament_table(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    if b.decision.before is not None:
        raise Refused("table_exists", table=cmd.table)
    if cmd.actor is None or cmd.room is None:
        raise Refused("no_actor")
    for event in tournament_table_events(cmd):
        b.emit(event)
    b.finish_if_over()


def _tick(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    """A deadline fired for the table at ``args.version``: an AI seat's turn, or a turn timer."""
    t = b.t
    if t.status != RUNNING or cmd.args.get("version") != t.version:
        return  # stale: the table moved on since the deadline was set; nothing to do
    seat_no = t.to_move()
    assert seat_no is not None
    seat = t.seats[seat_no]
    view = engine.view(t.engine, seat_no)
    if not seat.human:
        _play_move(b, seat_no, ctx.choose_move(view, seat.bot or ctx.bot_level, bot_seed(t)), "bot")
        return
    if t.turn_seconds <= 0 or ctx.now < t.turn_since + t.turn_seconds:
        return  # the player still has time
    _play_move(b, seat_no, ctx.choose_move(view, ctx.bot_level, bot_seed(t)), "timeout")
    after = b.t
    if after.status == RUNNING and after.seats[seat_no].timeouts >= ctx.timeouts_to_bot:
        b.emit(SeatTakenByBot(seat=seat_no, level=ctx.bot_level, reason="timeouts",
                              player=after.seats[seat_no].player))


_HANDLERS: dict[str, Callable[[_Builder, TableCommand, Context], None]] = {
    "new": _create, "play": _create, "join": _join, "leave": _leave, "bots": _bots, "start": _start,
    "cancel": _cancel, "move": _move, "action": _action, "hand": _hand, "replay": _replay, "tick": _tick,
    "kick": _kick, "set": _set, "tournament_table": _tournament_table,
}
