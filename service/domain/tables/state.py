"""A table's state, rebuilt by folding its events with :func:`evolve` (no IO, no clock).

The fold is an :class:`~service.domain.visitor.EventVisitor`, as every projection of the events is."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import engine
from service.domain import events as ev
from service.domain.embargo import Embargo
from service.domain.events import Event
from service.domain.identities import Player, Room
from service.domain.visitor import EventVisitor

LOBBY, RUNNING, FINISHED, CANCELLED = "lobby", "running", "finished", "cancelled"


@dataclass(frozen=True)
class Seat:
    """A seat: a person (``player``) or an AI player (``bot`` is its level); a person's seat may be
    taken over by an AI player, and then both are set."""

    player: Player | None = None
    bot: str | None = None
    locale: str = "es"
    timeouts: int = 0
    # A rematch's seat kept for its person, who has not accepted yet (not seated until then).
    invited: bool = False

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
    # A deal other tables share (service.domain.embargo: see embargo_of, which also covers tournaments).
    embargo: Embargo | None = None
    # The person of each private room (None: a group, or not known), in the order of ``rooms``: a
    # private room's messages and that person's own land in one chat, and keep one order
    # (service.domain.tables.notify).
    room_people: tuple[Player | None, ...] = ()
    # A rematch: the finished table it repeats.  On a finished table: its rematch (once asked) and who
    # asked for it (each person once).
    rematch_of: str | None = None
    rematch: str | None = None
    rematch_by: tuple[Player, ...] = ()

    def person_of(self, room: int) -> Player | None:
        """The person whose private chat ``rooms[room]`` is (None: a group, or not known)."""
        if room < len(self.room_people):
            return self.room_people[room]
        # A snapshot from before room_people: the room a table was made in is its creator's.
        return self.creator if room == 0 and self.rooms[0].kind == "private" else None

    def seat_of(self, player: Player | None) -> int | None:
        """The seat a person plays at this table (still as a person), or None."""
        for i, seat in enumerate(self.seats):
            if seat.human and not seat.invited and player is not None and player.same(seat.player):
                return i
        return None

    def invited_seat(self, player: Player | None) -> int | None:
        """The rematch's seat kept for ``player`` until they accept, or None."""
        for i, seat in enumerate(self.seats):
            if seat.invited and seat.bot is None and player is not None and player.same(seat.player):
                return i
        return None

    def waiting_for(self) -> list[int]:
        """The rematch's seats whose people have not answered yet."""
        return [i for i, s in enumerate(self.seats) if s.invited and s.bot is None]

    def to_move(self) -> int | None:
        """The seat to move, while the match runs."""
        return engine.to_move(self.engine) if self.status == RUNNING else None


def evolve(table: Table | None, event: Event, *, table_id: str = "", at: float = 0.0,
           play: Callable[[Any, str], Any] | None = None) -> Table:
    """The state after ``event``.  Only ``TableCreated`` may start from ``None``.

    ``play`` applies a move to the engine state (default ``engine.play``, which checks it and copies
    the state); a replay of stored events may pass a faster one (see ``repository.fold``).
    """
    fold = _Evolve(table_id, at, play or engine.play)
    if table is None:
        if not isinstance(event, ev.TableCreated):
            raise ValueError(f"{type(event).__name__} before TableCreated")
        return fold.table_created(event, None)
    return fold.visit(event, table)


class _Evolve(EventVisitor[Table | None, Table]):
    """The fold, one event at a time: ``visit(event, table before)`` is the table after it."""

    __slots__ = ("at", "play", "table_id")

    def __init__(self, table_id: str, at: float, play: Callable[[Any, str], Any]) -> None:
        self.table_id, self.at, self.play = table_id, at, play

    def table_created(self, e: ev.TableCreated, t: Table | None) -> Table:
        if not e.posts_in_room:  # a tournament's table, a deal of the day's (events.TableCreated)
            return Table(id=self.table_id, version=1, game=e.game, options=dict(e.options),
                         max_seats=e.max_seats, creator=e.creator, rooms=(), locale=e.locale,
                         turn_seconds=e.turn_seconds, tournament=e.tournament,
                         home=e.room if e.tournament is not None else None, embargo=e.embargo)
        return Table(id=self.table_id, version=1, game=e.game, options=dict(e.options),
                     max_seats=e.max_seats, creator=e.creator, rooms=(e.room,),
                     locale=e.locale, turn_seconds=e.turn_seconds, turn_since=self.at, embargo=e.embargo,
                     room_people=(e.creator if e.room.kind == "private" else None,),
                     rematch_of=e.rematch_of)

    def _next(self, t: Table | None, **changes: Any) -> Table:
        """The table one version on, with ``changes``, for the events that change more than the
        engine.  In a lobby, ``turn_since`` is the time of its last change (an idle lobby closes:
        decide's tick).  One copy of the table per event (a rebuild of the ratings folds every seat)."""
        t = _known(t)
        return _replace(t, **{"version": t.version + 1,
                              "turn_since": self.at if t.status == LOBBY else t.turn_since, **changes})

    def move_played(self, e: ev.MovePlayed, t: Table | None) -> Table:
        # The hot path (one per move): one copy of the table, not two.
        t = _known(t)
        seat = t.seats[e.seat]
        # "in a row": a move the player made resets the count; an AI seat's move leaves it.
        timeouts = {"timeout": seat.timeouts + 1, "player": 0}.get(e.cause, seat.timeouts)
        seats = t.seats if timeouts == seat.timeouts else _with_seat(
            t.seats, e.seat, replace(seat, timeouts=timeouts))
        state = self.play(t.engine, e.move)
        return _replace(t, version=t.version + 1, engine=state, seats=seats, turn_since=self.at)

    def room_attached(self, e: ev.RoomAttached, t: Table | None) -> Table:
        t = _known(t)
        people = tuple(t.person_of(i) for i in range(len(t.rooms)))
        return self._next(t, rooms=(*t.rooms, e.room), room_people=(*people, e.person))

    def player_joined(self, e: ev.PlayerJoined, t: Table | None) -> Table:
        t = _known(t)
        seat = Seat(player=e.player, locale=e.locale)
        if e.seat < len(t.seats):  # a rematch's invited person takes the seat kept for them
            return self._next(t, seats=_with_seat(t.seats, e.seat, seat))
        return self._next(t, seats=(*t.seats, seat))

    def seat_reserved(self, e: ev.SeatReserved, t: Table | None) -> Table:
        t = _known(t)
        return self._next(t, seats=(*t.seats, Seat(player=e.player, locale=e.locale, invited=True)))

    def rematch_asked(self, e: ev.RematchAsked, t: Table | None) -> Table:
        t = _known(t)
        return self._next(t, rematch=e.table, rematch_by=(*t.rematch_by, e.by))

    def player_left(self, e: ev.PlayerLeft, t: Table | None) -> Table:
        t = _known(t)
        return self._next(t, seats=t.seats[:e.seat] + t.seats[e.seat + 1:])

    def bots_added(self, e: ev.BotsAdded, t: Table | None) -> Table:
        t = _known(t)
        return self._next(t, seats=t.seats + tuple(Seat(bot=e.level, locale=t.locale) for _ in e.seats))

    def match_started(self, e: ev.MatchStarted, t: Table | None) -> Table:
        t = _known(t)
        state = engine.new_game(t.game, players=e.players, seed=e.seed, **t.options)
        return self._next(t, status=RUNNING, seed=e.seed, commitment=e.commitment, engine=state,
                          turn_since=self.at)

    def seat_taken_by_bot(self, e: ev.SeatTakenByBot, t: Table | None) -> Table:
        t = _known(t)
        seats = _with_seat(t.seats, e.seat, replace(t.seats[e.seat], bot=e.level))
        return self._next(t, seats=seats, turn_since=self.at)

    def match_finished(self, e: ev.MatchFinished, t: Table | None) -> Table:
        return self._next(t, status=FINISHED, result=e.result)

    def table_cancelled(self, e: ev.TableCancelled, t: Table | None) -> Table:
        return self._next(t, status=CANCELLED)

    def player_kicked(self, e: ev.PlayerKicked, t: Table | None) -> Table:
        t = _known(t)
        if e.level is None:
            return self._next(t, seats=t.seats[:e.seat] + t.seats[e.seat + 1:])
        return self._next(t, seats=_with_seat(t.seats, e.seat, replace(t.seats[e.seat], bot=e.level)))

    def options_changed(self, e: ev.OptionsChanged, t: Table | None) -> Table:
        return self._next(t, options=dict(e.options), max_seats=e.max_seats, turn_seconds=e.turn_seconds)


def _known(t: Table | None) -> Table:
    # evolve() lets only TableCreated start from None: every other event has a table before it.
    assert t is not None
    return t


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
    data["embargo"] = t.embargo.model_dump() if t.embargo else None
    data["room_people"] = [p.model_dump() if p else None for p in t.room_people]
    data["rematch_by"] = [p.model_dump() for p in t.rematch_by]
    data["seats"] = [{"player": s.player.model_dump() if s.player else None, "bot": s.bot,
                      "locale": s.locale, "timeouts": s.timeouts, "invited": s.invited} for s in t.seats]
    data["engine"] = engine.snapshot(t.engine) if t.engine is not None else None
    return data


def from_snapshot(data: dict[str, Any]) -> Table:
    """The table a snapshot saved."""
    d = dict(data)
    d["creator"] = Player.model_validate(d["creator"])
    d["rooms"] = tuple(Room.model_validate(r) for r in d["rooms"])
    d["home"] = Room.model_validate(d["home"]) if d.get("home") else None
    d["embargo"] = Embargo.model_validate(d["embargo"]) if d.get("embargo") else None
    d["room_people"] = tuple(Player.model_validate(p) if p else None for p in d.get("room_people", ()))
    d["rematch_by"] = tuple(Player.model_validate(p) for p in d.get("rematch_by", ()))
    d["seats"] = tuple(Seat(player=Player.model_validate(s["player"]) if s["player"] else None,
                            bot=s["bot"], locale=s["locale"], timeouts=s["timeouts"],
                            invited=s.get("invited", False)) for s in d["seats"])
    d["engine"] = engine.restore(d["engine"]) if d["engine"] is not None else None
    return Table(**d)
