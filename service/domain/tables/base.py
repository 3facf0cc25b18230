"""What every branch of ``decide`` shares: :class:`Refused`, the :class:`Context` from outside, the
:class:`Decision` and its :class:`Builder` (events folded as they are emitted), and the checks of a
table's status, creator and seats.  Pure."""

from __future__ import annotations

import hashlib
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import engine
from service.domain import daily
from service.domain.commands import (
    TableCommand,
)
from service.domain.events import (
    Event,
    MatchFinished,
)
from service.domain.tables.state import FINISHED, LOBBY, RUNNING, Table, evolve


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
    lobby_idle_s: float = 0.0  # 0: a lobby never closes for being idle
    auto_pass_s: float = 0.0  # a person's only move, a pass, is made for them after this (0: never)
    rematch_wait_s: float = 60.0  # a rematch waits this long for its people's answers
    # The tables whose shared deal may be shown now (service.domain.embargo; asked of the store before
    # deciding, for the tables a /replay of the batch shows).
    lifted: frozenset[str] = frozenset()


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
    """The AI player's random seed for the table's current turn (reproducible, and not the deal seed).
    At a daily deal's table it does not depend on the table (service.domain.daily.bot_seed): every
    attempt's AI players answer the same choices alike."""
    e = table.embargo
    if e is not None and e.kind == daily.KIND:
        return daily.bot_seed(e, table.version)
    return zlib.crc32(f"{table.id}:{table.version}".encode())


class Builder:
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


def require_status(t: Table, *wanted: str) -> None:
    if t.status in wanted:
        return
    if t.status == LOBBY:
        raise Refused("not_started", table=t.id)
    if t.status == RUNNING:
        raise Refused("already_started", table=t.id)
    if t.status == FINISHED:
        raise Refused("table_finished", table=t.id)
    raise Refused("table_cancelled", table=t.id)


def require_creator(t: Table, cmd: TableCommand) -> None:
    """The table's creator, or a moderator of the room (a group admin, as the adapter says)."""
    if cmd.actor is None:
        raise Refused("not_creator", table=t.id)
    if cmd.actor.same(t.creator):
        return
    if cmd.moderator and cmd.room is not None and cmd.room.kind == "group" \
            and any(cmd.room.same(r) for r in t.rooms):
        return
    raise Refused("not_creator", table=t.id)


def require_seat(t: Table, cmd: TableCommand) -> int:
    seat = t.seat_of(cmd.actor)
    if seat is None:
        raise Refused("not_seated", table=t.id)
    return seat


