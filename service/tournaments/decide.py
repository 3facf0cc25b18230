"""What a tournament command does: its events, its messages and the tables to create.  Pure.

``decide`` matches the command's typed request (:mod:`service.tournaments.commands`: open, join,
leave, start, cancel from the chat or a button; the service's ``table_finished``, whose record's seat
ranks score a table), as a table's ``decide`` does.  A refusal raises :class:`Refused` and changes
nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

import engine
from service.domain.commands import TableCommand
from service.domain.events import Event
from service.domain.identities import Player
from service.domain.messages import Wire, action_wire, recipient_wire, wire, wire_of
from service.domain.tables.decide import Refused
from service.domain.tables.notify import reply_to
from service.domain.tokens import issue
from service.protocol import text
from service.ratings.boards import BOARD, view_move
from service.tournaments import swiss
from service.tournaments.commands import Begin, Cancel, Enter, Open, TableFinished, Withdraw, request_of
from service.tournaments.events import (
    EntrantJoined,
    EntrantLeft,
    RoundFinished,
    RoundStarted,
    TableDraw,
    TableScored,
    TournamentCancelled,
    TournamentFinished,
    TournamentOpened,
)
from service.tournaments.state import RUNNING, SIGNUP, Tournament, evolve

MAX_ENTRANTS = 48
DEFAULT_SEATS = 4


@dataclass(frozen=True)
class Context:
    """What deciding needs from outside: the time, round seeds, the button secret, defaults, and
    the tournament the group shows now (for ``open``)."""

    now: float
    new_seed: Callable[[], str]
    secret: bytes
    turn_seconds: float = 60.0
    bot_level: str = "medium"
    current: Tournament | None = None


@dataclass
class Decision:
    """The events, the state after them, the messages, and the table commands to send."""

    after: Tournament | None
    events: list[Event] = field(default_factory=list)
    messages: list[Wire] = field(default_factory=list)
    tables: list[TableCommand] = field(default_factory=list)


def _name(p: Player) -> str:
    return p.name or p.user


class _Builder:
    def __init__(self, t: Tournament | None, cmd: TableCommand) -> None:
        self.d = Decision(after=t)
        self.cmd = cmd

    @property
    def t(self) -> Tournament:
        assert self.d.after is not None
        return self.d.after

    def emit(self, event: Event) -> None:
        self.d.after = evolve(self.d.after, event, tid=self.cmd.table)
        self.d.events.append(event)

    def say(self, lines: list[text.Item], actions: list[Wire] | None = None,
            view: Wire | None = None) -> None:
        t = self.t
        to = recipient_wire(room=wire_of(t.room))
        self.d.messages.append(wire(id=f"{self.cmd.id}:{len(self.d.messages)}", table=t.id, version=t.version,
                                    to=to, locale=t.locale, kind="reply", lines=lines, game=t.game, view=view,
                                    actions=actions or []))

    def board(self, secret: bytes) -> list[Wire]:
        """The group's leaderboard of the game, as a button (posted anew: it is not this message)."""
        move = view_move("top", self.t.game, anew=True)
        token = issue(secret, table=BOARD, seat=0, version=0, move=move)
        return [action_wire(move=move, token=token)]


def refusal_message(cmd: TableCommand, refused: Refused, version: int) -> Wire:
    """The reply to a refused tournament command, where it was sent."""
    line = text.t(f"wrong_chat.{cmd.name}") if refused.code == "wrong_chat" else \
        text.t(f"tournament.refusal.{refused.code}", **refused.params)
    return wire(id=f"{cmd.id}:0", table=cmd.table, version=version, to=reply_to(cmd), locale=cmd.locale,
                kind="reply", lines=[line], actions=[], code=refused.code)


def decide(t: Tournament | None, cmd: TableCommand, ctx: Context) -> Decision:
    """The decision on ``cmd`` (``t``: the tournament it names, None if it does not exist)."""
    b = _Builder(t, cmd)
    req = request_of(cmd)
    if isinstance(req, TableFinished):
        if t is not None:
            _table_finished(b, req, ctx)
        return b.d
    if cmd.room is None or cmd.room.kind != "group":
        raise Refused("wrong_chat", command="tournament", chat=cmd.room.kind if cmd.room else "private")
    if isinstance(req, Open):
        _open(b, cmd, req, ctx)
        return b.d
    if t is None:
        raise Refused("no_tournament_here")
    match req:
        case Enter():
            _join(b, cmd, ctx)
        case Withdraw():
            _leave(b, cmd, ctx)
        case Begin():
            _start(b, cmd, ctx)
        case Cancel():
            _cancel(b, cmd)
        case _:  # an action no tournament knows
            raise Refused("no_tournament_here")
    return b.d


def _open(b: _Builder, cmd: TableCommand, req: Open, ctx: Context) -> None:
    if b.d.after is not None or (ctx.current is not None and ctx.current.status in (SIGNUP, RUNNING)):
        raise Refused("tournament_exists")
    assert cmd.actor is not None and cmd.room is not None
    options = dict(req.options)
    turn = options.pop("turn", ctx.turn_seconds)
    if isinstance(turn, bool) or not isinstance(turn, int | float) or turn < 0:
        raise Refused("bad_options", reason=f"turn={turn}")
    seats = req.players or DEFAULT_SEATS
    try:
        engine.new_game(req.game, players=seats, seed=0, **options)
    except (ValueError, TypeError) as e:
        raise Refused("bad_options", reason=str(e)) from None
    b.emit(TournamentOpened(game=req.game, options=options, seats=seats, rounds=req.rounds or 3,
                            creator=cmd.actor, room=cmd.room, locale=cmd.locale, turn_seconds=float(turn),
                            level=ctx.bot_level))
    b.emit(EntrantJoined(player=cmd.actor, locale=cmd.locale))
    _signup(b, ctx)


def _signup(b: _Builder, ctx: Context) -> None:
    t = b.t
    names = [_name(p) for p in t.entrants]
    # Labels in the reader's language when the message is read (i18n.render.move_text).
    actions = [action_wire(move=m, token=issue(ctx.secret, table=t.id, seat=0, version=t.version, move=m))
               for m in ("join", "leave", "start")]
    b.say([text.t("tournament.signup", game=t.game, rounds=t.rounds, seats=t.seats, creator=_name(t.creator),
                  n=len(names), entrants=text.joined(names) if names else "—")], actions)


def _require_signup(t: Tournament) -> None:
    if t.status == RUNNING:
        raise Refused("tournament_started")
    if t.status != SIGNUP:
        raise Refused("tournament_over")


def _require_creator(t: Tournament, cmd: TableCommand) -> None:
    if cmd.actor is not None and (cmd.actor.same(t.creator) or (cmd.moderator and t.room.same(cmd.room))):
        return
    raise Refused("not_tournament_creator", creator=_name(t.creator))


def _join(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    _require_signup(t)
    if t.entrant_of(cmd.actor) is not None:
        raise Refused("already_entered")
    if len(t.entrants) >= MAX_ENTRANTS:
        raise Refused("tournament_full", limit=MAX_ENTRANTS)
    assert cmd.actor is not None
    b.emit(EntrantJoined(player=cmd.actor, locale=cmd.locale))
    _signup(b, ctx)


def _leave(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    _require_signup(t)
    if t.entrant_of(cmd.actor) is None:
        raise Refused("not_entered")
    assert cmd.actor is not None
    b.emit(EntrantLeft(player=cmd.actor))
    _signup(b, ctx)


def _start(b: _Builder, cmd: TableCommand, ctx: Context) -> None:
    t = b.t
    _require_creator(t, cmd)
    _require_signup(t)
    if len(t.entrants) < 2:
        raise Refused("too_few_entrants", n=len(t.entrants))
    _start_round(b, ctx, 1, list(range(len(t.entrants))))


def _cancel(b: _Builder, cmd: TableCommand) -> None:
    t = b.t
    _require_creator(t, cmd)
    if t.status not in (SIGNUP, RUNNING):
        raise Refused("tournament_over")
    assert cmd.actor is not None
    b.emit(TournamentCancelled(by=cmd.actor))
    b.say([text.t("tournament.cancelled", name=_name(cmd.actor))])


def _names(t: Tournament, seats: list[int | None]) -> list[text.Item]:
    return [_name(t.entrants[i]) if i is not None else text.t("tournament.ai") for i in seats]


def _start_round(b: _Builder, ctx: Context, round_no: int, order: list[int]) -> None:
    t = b.t
    seed = ctx.new_seed()
    draws = [TableDraw(table=swiss.table_id(t.id, round_no, k), seats=seats)
             for k, seats in enumerate(swiss.pair(order, t.seats, round_no))]
    b.emit(RoundStarted(round=round_no, seed=seed, commitment=hashlib.sha256(seed.encode()).hexdigest(),
                        tables=draws))
    t = b.t
    lines: list[text.Item] = [text.t("tournament.round", n=round_no, rounds=t.rounds,
                                     commitment=t.commitment)]
    lines += [text.t("tournament.table_line", k=k + 1, names=text.joined(_names(t, d.seats)))
              for k, d in enumerate(draws)]
    b.say(lines, view={"round": round_no, "tables": [d.table for d in draws]})  # a platform links each table
    b.d.tables += [table_command(t, d, b.cmd, ctx) for d in draws]


def table_command(t: Tournament, d: TableDraw, cmd: TableCommand, ctx: Context) -> TableCommand:
    """The command that creates and starts one table of the current round (the worker's
    ``tournament_table``); its id is derived, so a second copy is recognised as a duplicate."""
    seats: list[Wire] = []
    for i in d.seats:
        if i is None:
            seats.append({"bot": t.level})
        else:
            seats.append({"player": t.entrants[i].model_dump(), "locale": t.locales[i]})
    return TableCommand(id=f"tt:{d.table}", table=d.table, name="tournament_table", actor=t.creator,
                        room=t.room, locale=t.locale, at=ctx.now,
                        args={"tournament": t.id, "round": t.round, "game": t.game, "options": t.options,
                              "turn_seconds": t.turn_seconds, "seed": t.seed, "seats": seats})


def _table_finished(b: _Builder, req: TableFinished, ctx: Context) -> None:
    t = b.t
    table, record = req.table, req.record
    draw = next((d for d in t.tables() if d.table == table), None)
    if t.status != RUNNING or draw is None or table in t.scored:
        return  # a table of a cancelled tournament, or a copy of a report: nothing to do
    ranks = [int(s["rank"]) for s in record.get("seats", [])]
    if len(ranks) != len(draw.seats):
        raise ValueError(f"table {table} reported {len(ranks)} seats, drawn with {len(draw.seats)}")
    b.emit(TableScored(round=t.round, table=table, ranks=ranks, points=swiss.points(ranks)))
    if not b.t.round_over():
        return
    b.emit(RoundFinished(round=t.round))
    t = b.t
    totals = t.totals()
    rows = [text.t("tournament.standing_row", pos=pos, name=_name(t.entrants[i]), points=_num(totals[i]))
            for pos, i in enumerate(t.order(), 1)]
    b.say([text.t("tournament.standings", n=t.round, rounds=t.rounds), *rows,
           text.t("tournament.seed", seed=t.seed, commitment=t.commitment)], b.board(ctx.secret))
    if t.round < t.rounds:
        _start_round(b, ctx, t.round + 1, t.order())
        return
    podium = t.order()[:3]
    b.emit(TournamentFinished(podium=podium))
    names = [_name(b.t.entrants[i]) for i in podium]
    b.say([text.t("tournament.podium", first=names[0], second=names[1] if len(names) > 1 else "—",
                  third=names[2] if len(names) > 2 else "—")], b.board(ctx.secret))


def _num(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:.1f}"
