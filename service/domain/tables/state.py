"""A table's state, rebuilt by folding its events with :func:`evolve` (no IO, no clock)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import engine
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
from service.domain.identities import Player, Room

LOBBY, RUNNING, FINISHED, CANCELLED = "lobby", "running", "finished", "cancelled"


@dataclass(frozen=True)
class Seat:
    """A seat: a person (``player``) or an AI player (``bot`` is its level); a person's seat may be
    taken over by an AI player, and then both are set."""

    player: Player | None = None
    bot: str | None = None
    locale: str = "es"
    timeouts: int = 0

    @property
    def human(self) -> bool:
        """Whether a person plays this seat now."""
        return self.bot is None


@dataclass(frozen=True)
class Table:
    """Everything the service knows about a table at ``version`` (the number of events folded)."""

    id: str
    version: int
    game: str
    options: dict[str, Any]
    max_seats: int
    creator: Player
    rooms: tuple[Room, ...]
    locale: str
    turn_seconds: float
    seats: tuple[Seat, ...] = ()
    status: str = LOBBY
    seed: str | None = None
    commitment: str | None = None
    engine: Any = None
    turn_since: float = 0.0
    result: dict[str, Any] | None = None
    # A tournament's table: the tournament, and its group (where the table does not post: see
    # events.TableCreated), whose boards count the match.
    tournament: str | None = None
    home: Room | None = None

    def seat_of(self, player: Player | None) -> int | None:
        """The seat a person plays at this table (still as a person), or None."""
        for i, seat in enumerate(self.seats):
            if seat.human and player is not None and player.same(seat.player):
                return i
        return None

    def to_move(self) -> int | None:
        """The seat to move, while the match runs."""
        return engine.to_move(self.engine) if self.status == RUNNING else None


def evolve(table: Table | None, event: Event, *, table_id: str = "", at: float = 0.0,
           play: Callable[[Any, str], Any] | None = None) -> Table:
    """The state after ``event``.  Only ``TableCreated`` may start from ``None``.

    ``play`` applies a move to the engine state (default ``engine.play``, which checks it and copies
    the state); a replay of stored events may pass a faster one (see ``repository.fold``).
    """
    if isinstance(event, TableCreated):
        if event.tournament is not None:
            return Table(id=table_id, version=1, game=event.game, options=dict(event.options),
                         max_seats=event.max_seats, creator=event.creator, rooms=(), locale=event.locale,
                         turn_seconds=event.turn_seconds, tournament=event.tournament, home=event.room)
        return Table(id=table_id, version=1, game=event.game, options=dict(event.options),
                     max_seats=event.max_seats, creator=event.creator, rooms=(event.room,),
                     locale=event.locale, turn_seconds=event.turn_seconds, turn_since=at)
    if table is None:
        raise ValueError(f"{type(event).__name__} before TableCreated")
    if isinstance(event, MovePlayed):
        # The hot path (one per move): one copy of the table, not two.
        seat = table.seats[event.seat]
        # "in a row": a move the player made resets the count; an AI seat's move leaves it.
        timeouts = {"timeout": seat.timeouts + 1, "player": 0}.get(event.cause, seat.timeouts)
        seats = table.seats if timeouts == seat.timeouts else _with_seat(
            table.seats, event.seat, replace(seat, timeouts=timeouts))
        state = (play or engine.play)(table.engine, event.move)
        return _replace(table, version=table.version + 1, engine=state, seats=seats, turn_since=at)
    # In a lobby, turn_since is the time of its last change (an idle lobby closes: decide's tick).
    t = replace(table, version=table.version + 1,
                turn_since=at if table.status == LOBBY else table.turn_since)
    if isinstance(event, RoomAttached):
        return replace(t, rooms=(*t.rooms, event.room))
    if isinstance(event, PlayerJoined):
        return replace(t, seats=(*t.seats, Seat(player=event.player, locale=event.locale)))
    if isinstance(event, PlayerLeft):
        return replace(t, seats=t.seats[:event.seat] + t.seats[event.seat + 1:])
    if isinstance(event, BotsAdded):
        return replace(t, seats=t.seats + tuple(Seat(bot=event.level, locale=t.locale) for _ in event.seats))
    if isinstance(event, MatchStarted):
        state = engine.new_game(t.game, players=event.players, seed=event.seed, **t.options)
        return replace(t, status=RUNNING, seed=event.seed, commitment=event.commitment, engine=state,
                       turn_since=at)
    if isinstance(event, SeatTakenByBot):
        seat = t.seats[event.seat]
        seats = _with_seat(t.seats, event.seat, replace(seat, bot=event.level))
        return replace(t, seats=seats, turn_since=at)
    if isinstance(event, MatchFinished):
        return replace(t, status=FINISHED, result=event.result)
    if isinstance(event, TableCancelled):
        return replace(t, status=CANCELLED)
    if isinstance(event, PlayerKicked):
        if event.level is None:
            return replace(t, seats=t.seats[:event.seat] + t.seats[event.seat + 1:])
        seats = _with_seat(t.seats, event.seat, replace(t.seats[event.seat], bot=event.level))
        return replace(t, seats=seats)
    if isinstance(event, OptionsChanged):
        return replace(t, options=dict(event.options), max_seats=event.max_seats,
                       turn_seconds=event.turn_seconds)
    raise ValueError(f"unknown event {type(event).__name__}")


def _replace(t: Table, **changes: Any) -> Table:
    """``dataclasses.replace`` for the hot path: the same new frozen table, without re-running
    ``__init__`` over every field (Table has no ``__post_init__`` to skip)."""
    new = object.__new__(Table)
    new.__dict__.update(t.__dict__)
    new.__dict__.update(changes)
    return new


def _with_seat(seats: tuple[Seat, ...], i: int, seat: Seat) -> tuple[Seat, ...]:
    return (*seats[:i], seat, *seats[i + 1:])


def to_snapshot(t: Table) -> dict[str, Any]:
    """A JSON-serialisable snapshot of the table (engine state included: never show it to anyone)."""
    data = {f.name: getattr(t, f.name) for f in dataclasses.fields(t)}
    data["creator"] = t.creator.model_dump()
    data["rooms"] = [r.model_dump() for r in t.rooms]
    data["home"] = t.home.model_dump() if t.home else None
    data["seats"] = [{"player": s.player.model_dump() if s.player else None, "bot": s.bot,
                      "locale": s.locale, "timeouts": s.timeouts} for s in t.seats]
    data["engine"] = engine.snapshot(t.engine) if t.engine is not None else None
    return data


def from_snapshot(data: dict[str, Any]) -> Table:
    """The table a snapshot saved."""
    d = dict(data)
    d["creator"] = Player.model_validate(d["creator"])
    d["rooms"] = tuple(Room.model_validate(r) for r in d["rooms"])
    d["home"] = Room.model_validate(d["home"]) if d.get("home") else None
    d["seats"] = tuple(Seat(player=Player.model_validate(s["player"]) if s["player"] else None,
                            bot=s["bot"], locale=s["locale"], timeouts=s["timeouts"]) for s in d["seats"])
    d["engine"] = engine.restore(d["engine"]) if d["engine"] is not None else None
    return Table(**d)
