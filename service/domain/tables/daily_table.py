"""A deal of the day's table (:mod:`service.domain.daily`): created, seated and started at once by
the ``daily_table`` command (:class:`~service.domain.commands.DailyTable`, which the gateway sends for
``/daily`` and the web table's "Daily deal"), played by one person against AI players, closed when
the day's embargo lifts.  Pure.

The table is the person's one attempt: its id is derived from the person, the game and the day, so
a second ``daily_table`` for it finds it.  While it runs, that command sends the hand again (on any
surface: a retry, the other chat, the web); once it is over, it is refused (``daily_played``).
Nothing can change who plays it: the lobby's commands are refused there (``daily_fixed``), since a
seat handed to an AI player, or a match cancelled and dealt again, would not be the same attempt.
"""

from __future__ import annotations

from service.domain import daily
from service.domain.commands import TableCommand
from service.domain.embargo import Embargo
from service.domain.events import BotsAdded, MatchStarted, PlayerJoined, TableCancelled, TableCreated
from service.domain.requests import DailyTable
from service.domain.tables.base import Builder, Context, Refused, commitment
from service.domain.tables.state import FINISHED, RUNNING, Table
from service.protocol import text

FIXED = frozenset({"join", "leave", "bots", "kick", "set", "start", "cancel"})
"""The commands a daily deal's table refuses: its seats and its deal are fixed."""


def day_of_table(t: Table | None) -> tuple[str, int] | None:
    """The game and day of a daily deal's table (None: another table)."""
    return daily.daily_of(t.embargo) if t is not None else None


def check(t: Table, cmd: TableCommand, ctx: Context) -> None:
    """Refuse what a daily deal's table does not allow: the lobby's commands at any time, and any
    move once the day's embargo has lifted (the attempt is closed: the deal may be shown now)."""
    if cmd.name in FIXED:
        raise Refused("daily_fixed", table=t.id)
    if cmd.name in ("move", "action") and daily.expired(t.embargo, ctx.now):
        raise Refused("daily_expired", table=t.id)


def daily_table(b: Builder, cmd: TableCommand, req: DailyTable, ctx: Context) -> None:
    """Decide a ``daily_table`` command: start the attempt, or (it exists) send its hand again."""
    if cmd.actor is None or cmd.room is None:
        raise Refused("no_actor")
    if req.game not in daily.GAMES:
        raise Refused("bad_options", reason=f"daily_table: game {req.game!r}")
    t = b.decision.before
    if t is not None:
        if t.seat_of(cmd.actor) is None:
            raise Refused("not_seated", table=t.id)
        if t.status == RUNNING and not daily.expired(t.embargo, ctx.now):
            return  # no event: the notifier sends the hand again (see reply_lines)
        if t.status == FINISHED:
            raise Refused("daily_played", game=text.t(f"game.{req.game}"))
        raise Refused("daily_expired", table=t.id)
    emb = Embargo(kind=daily.KIND, key=f"{req.game}:{daily.day_name(req.day)}", until=req.until)
    if ctx.now >= req.until:
        raise Refused("daily_expired", table=cmd.table)
    b.emit(TableCreated(game=req.game, options=dict(daily.OPTIONS[req.game]), max_seats=daily.PLAYERS,
                        creator=cmd.actor, room=cmd.room, locale=cmd.locale, turn_seconds=0.0, embargo=emb))
    b.emit(PlayerJoined(seat=0, player=cmd.actor, locale=cmd.locale))
    b.emit(BotsAdded(seats=list(range(1, daily.PLAYERS)), level=daily.LEVEL))
    b.emit(MatchStarted(seed=req.seed, commitment=commitment(req.seed), players=daily.PLAYERS))
    b.finish_if_over()


def expire(b: Builder, ctx: Context) -> bool:
    """On a tick: close a daily attempt still running when the day's embargo lifts (not scored).
    True when it did."""
    t = b.t
    if t.status == RUNNING and day_of_table(t) is not None and daily.expired(t.embargo, ctx.now):
        b.emit(TableCancelled(by=t.creator, reason="expired"))
        return True
    return False


def deadline(t: Table) -> float | None:
    """When a running daily attempt closes (unix seconds), for the timers; None for other tables."""
    if t.status != RUNNING or day_of_table(t) is None or t.embargo is None:
        return None
    return t.embargo.until


def _when(t: Table) -> str:
    until = t.embargo.until if t.embargo is not None and t.embargo.until is not None else 0.0
    return daily.clock_text(until)


def reply_lines(t: Table, cmd: TableCommand, started: bool, finished: bool) -> list[text.Item]:
    """What the person is told beside their hand at a daily table: the deal and its commitment when
    it starts, that it is the same attempt when they ask again, and their result when it ends (their
    rank among everyone waits for ``/daily``: the board is read, not folded)."""
    found = day_of_table(t)
    if found is None:
        return []
    game, day = found
    lines: list[text.Item] = []
    if started:
        lines.append(text.t("daily.started", game=text.t(f"game.{game}"), day=daily.day_name(day),
                            commitment=t.commitment or "", reveal=_when(t)))
    elif cmd.name == "daily_table" and t.status == RUNNING:
        lines.append(text.t("daily.resumed", game=text.t(f"game.{game}"), day=daily.day_name(day)))
    if finished and t.result is not None:
        score = daily.score_of(game, t.result)
        lines.append(text.t(f"daily.over.{game}", place=score.place, left=score.left,
                            commitment=t.commitment or "", reveal=_when(t)))
    return lines
