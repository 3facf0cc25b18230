"""The derived indexes, as one projection of the events: room → table, player → tables, stats.

The event streams are the truth; these indexes only make lookups cheap.  :func:`index_ops` says what
one event changes, given the table after it; the worker applies those changes after each append
(:func:`queue`), ``cinq reindex`` folds every table's events through the same function to write
the indexes again from nothing (:class:`Rebuild`), and ``cinq trim`` undoes them for the tables it
deletes (:func:`touched`).  One definition, an event visitor as the fold is
(:mod:`service.domain.visitor`), so the three cannot drift.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from service.domain import events as ev
from service.domain.events import Event
from service.domain.tables.state import Table
from service.domain.visitor import EventVisitor
from service.store.keys import Keys


@dataclass(frozen=True)
class IndexOp:
    """One change: the ``room`` (platform, chat) shows the table; a person (platform, user) ``sits``
    at it or ``leaves`` it; a person ``played`` a finished match, or ``won`` it."""

    kind: Literal["room", "sits", "leaves", "played", "won"]
    platform: str
    who: str
    table: str


def index_ops(t: Table, event: Event) -> list[IndexOp]:
    """What ``event`` changes in the indexes (``t``: the table after it)."""
    return _INDEX.visit(event, t)


class _Index(EventVisitor[Table, list[IndexOp]]):
    """The index changes of each event (an event visitor, as the fold is): most events, the moves
    above all, change none."""

    __slots__ = ()

    def other(self, event: Event, t: Table) -> list[IndexOp]:
        return []

    def table_created(self, e: ev.TableCreated, t: Table) -> list[IndexOp]:
        if not e.posts_in_room:
            return []  # a tournament's or a daily deal's table is shown in no room (events.TableCreated)
        return [IndexOp("room", e.room.platform, e.room.chat, t.id)]

    def room_attached(self, e: ev.RoomAttached, t: Table) -> list[IndexOp]:
        return [IndexOp("room", e.room.platform, e.room.chat, t.id)]

    def player_joined(self, e: ev.PlayerJoined, t: Table) -> list[IndexOp]:
        return [IndexOp("sits", e.player.platform, e.player.user, t.id)]

    def player_left(self, e: ev.PlayerLeft, t: Table) -> list[IndexOp]:
        return [IndexOp("leaves", e.player.platform, e.player.user, t.id)]

    def player_kicked(self, e: ev.PlayerKicked, t: Table) -> list[IndexOp]:
        return [] if e.player is None else [IndexOp("leaves", e.player.platform, e.player.user, t.id)]

    def table_cancelled(self, e: ev.TableCancelled, t: Table) -> list[IndexOp]:
        return _closed(t, None)

    def match_finished(self, e: ev.MatchFinished, t: Table) -> list[IndexOp]:
        return _closed(t, set(e.result.get("winners", [])))


def _closed(t: Table, winners: set[int] | None) -> list[IndexOp]:
    """Every person seated leaves the table; at a match's end (``winners`` given) each also played
    it, and the winners won it."""
    ops = []
    for i, seat in enumerate(t.seats):
        if seat.player is None:
            continue
        p = seat.player
        ops.append(IndexOp("leaves", p.platform, p.user, t.id))
        if winners is not None:
            ops.append(IndexOp("played", p.platform, p.user, t.id))
            if i in winners:
                ops.append(IndexOp("won", p.platform, p.user, t.id))
    return ops


_INDEX = _Index()


def touched(t: Table, events: list[Event]) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
    """Every room (platform, chat) and every person (platform, user) the indexes ever pointed from
    at table ``t`` (the table after ``events``, all of its events): what deleting it must undo."""
    ops = [op for e in events for op in index_ops(t, e)]
    rooms = {(op.platform, op.who) for op in ops if op.kind == "room"}
    people = {(op.platform, op.who) for op in ops if op.kind == "sits"}
    return rooms, people | {(s.player.platform, s.player.user) for s in t.seats if s.player is not None}


def queue(pipe: Any, keys: Keys, ops: list[IndexOp]) -> None:
    """Queue the live index writes of ``ops`` on ``pipe`` (the worker, after an append)."""
    for op in ops:
        if op.kind == "room":
            pipe.set(keys.room(op.platform, op.who), op.table)
        elif op.kind == "sits":
            pipe.sadd(keys.player_tables(op.platform, op.who), op.table)
        elif op.kind == "leaves":
            pipe.srem(keys.player_tables(op.platform, op.who), op.table)
        else:
            pipe.hincrby(keys.player_stats(op.platform, op.who), op.kind, 1)


@dataclass
class Rebuild:
    """The indexes folded from nothing (``cinq reindex``): rooms show the table most recently created
    or attached in them; the rest is the same changes as the worker's, summed."""

    rooms: dict[tuple[str, str], tuple[float, str]] = field(default_factory=dict)
    tables: dict[tuple[str, str], set[str]] = field(default_factory=dict)
    stats: dict[tuple[str, str], dict[str, int]] = field(default_factory=dict)

    def add(self, ops: list[IndexOp], at: float) -> None:
        """Fold one event's changes (``at``: when it happened)."""
        for op in ops:
            who = (op.platform, op.who)
            if op.kind == "room":
                if self.rooms.get(who, (-1.0, ""))[0] <= at:
                    self.rooms[who] = (at, op.table)
            elif op.kind == "sits":
                self.tables.setdefault(who, set()).add(op.table)
            elif op.kind == "leaves":
                self.tables.get(who, set()).discard(op.table)
            else:
                st = self.stats.setdefault(who, {"played": 0, "won": 0})
                st[op.kind] += 1

    def queue(self, pipe: Any, keys: Keys) -> None:
        """Queue the writes that replace the indexes with this fold's."""
        for (platform, chat), (_, table_id) in self.rooms.items():
            pipe.set(keys.room(platform, chat), table_id)
        for (platform, user), ts in self.tables.items():
            pipe.delete(keys.player_tables(platform, user))
            if ts:
                pipe.sadd(keys.player_tables(platform, user), *ts)
        for (platform, user), st in self.stats.items():
            pipe.hset(keys.player_stats(platform, user), mapping=st)
