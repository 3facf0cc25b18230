"""The events of a table: versioned pydantic models, stored as JSON envelopes in the table's stream.

An envelope is ``{"type": "TableCreated", "v": 1, "at": <unix s>, "cmd": <command id>, "data": {...}}``;
a move, most of the events, is written compactly as ``{"M": [seat, move, cause], "at": ..., "cmd": ...}``
(:func:`encode`; readers of raw events spell it out with :func:`envelope`).
Events are facts, named in the past tense, and are never rewritten: when a model changes, its schema
version goes up and an *upcaster* turns the old ``data`` into the new shape when it is read, so an event
written years ago still loads (see ``UPCASTERS``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Literal

import orjson
from pydantic import BaseModel, ConfigDict

from service.domain.embargo import Embargo
from service.domain.identities import Player, Room


class Event(BaseModel):
    """Base of every event.  ``version`` is the schema version of the model, not the table's."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    schema_version: ClassVar[int] = 1


class TableCreated(Event):
    """A table was created in a lobby (``/new``, or ``/play`` which also seats and starts)."""

    game: str
    options: dict[str, Any]
    max_seats: int
    creator: Player
    room: Room
    locale: str
    turn_seconds: float
    # A tournament's table (service.tournaments): it posts in no room, since every table of its round
    # plays the same deal and its public moves would show the other tables' hidden cards (G-1).
    tournament: str | None = None
    # A deal shared with other tables (a deal of the day): what shows it waits until the embargo
    # lifts (service.domain.embargo).  A tournament's table has one implicitly, from ``tournament``.
    embargo: Embargo | None = None
    # A rematch: the finished table whose people, options and seats this one repeats (its seats are
    # reserved for them: SeatReserved; the match starts once they accept or AI players take them).
    rematch_of: str | None = None

    @property
    def posts_in_room(self) -> bool:
        """Whether the table posts in ``room``: not a tournament's (see ``tournament``), nor a deal
        of the day's, which is one person's game against AI players: their hand message shows them
        every change (the web table may have started it, for a person whose private chat the service
        does not know)."""
        return self.tournament is None and (self.embargo is None or self.embargo.kind != "daily")


class RoomAttached(Event):
    """Another room now shows the table.  ``person``: a private room's person (the one who joined from
    it), so that the room's messages keep their order with that person's own (events before it have
    none)."""

    room: Room
    person: Player | None = None


class PlayerJoined(Event):
    """A person took a seat in the lobby.  v2: ``player`` became a model and ``locale`` was added."""

    schema_version: ClassVar[int] = 2
    seat: int
    player: Player
    locale: str


class PlayerLeft(Event):
    """A person left their seat in the lobby (later seats move up one)."""

    seat: int
    player: Player


class BotsAdded(Event):
    """AI players took seats in the lobby."""

    seats: list[int]
    level: str


class MatchStarted(Event):
    """The match began.  ``seed`` decides the deals; it never leaves the service before the end."""

    seed: str
    commitment: str
    players: int


class MovePlayed(Event):
    """A seat made a move; ``cause`` says who chose it (the player, an AI seat, the turn timer, or the
    service passing for a person whose only move was to pass: ``auto``)."""

    seat: int
    move: str
    cause: Literal["player", "bot", "timeout", "auto"]


# The moves decided and folded, each distinct (seat, move, cause) validated once and then shared: an
# event is frozen, and a model built and validated per move was the one pydantic model left on the
# worker's path for every command (issue 33).  Bounded, as the commands' identities are.
_MOVES: dict[tuple[int, str, str], MovePlayed] = {}
_MOVES_MAX = 8192


def move_played(seat: int, move: str, cause: str) -> MovePlayed:
    """The :class:`MovePlayed` of ``seat`` playing ``move`` (validated: a bad value raises pydantic's
    ``ValidationError``), shared with every other move of the same seat, move and cause."""
    if type(seat) is not int or type(move) is not str or type(cause) is not str:
        return MovePlayed(seat=seat, move=move, cause=cause)  # type: ignore[arg-type]  # validates
    key = (seat, move, cause)
    event = _MOVES.get(key)
    if event is None:
        event = MovePlayed(seat=seat, move=move, cause=cause)  # type: ignore[arg-type]  # validates
        if len(_MOVES) >= _MOVES_MAX:
            _MOVES.clear()
        _MOVES[key] = event
    return event


class SeatTakenByBot(Event):
    """An AI player took over a seat of a running match (its player left, or let the timer run out),
    or a rematch's seat whose person said no (``declined``) or did not answer in time (``no_answer``)."""

    seat: int
    level: str
    reason: Literal["left", "timeouts", "declined", "no_answer"]
    player: Player | None = None


class RematchAsked(Event):
    """A person of a finished match asked to play again with the same people, options and seats: the
    rematch is table ``table`` (the first ask creates it; later asks accept its seat there)."""

    by: Player
    table: str


class SeatReserved(Event):
    """A rematch's seat kept for the person who had it (``invited`` until they accept)."""

    seat: int
    player: Player
    locale: str


class MatchFinished(Event):
    """The match is over; ``result`` is the engine's."""

    result: dict[str, Any]


class TableCancelled(Event):
    """The creator (or a moderator of its room) cancelled the table (``reason`` "cancel"), or its last
    person left the lobby ("empty"), or nobody changed the lobby for ``lobby_idle_s`` ("idle")."""

    by: Player
    reason: str = "cancel"


class PlayerKicked(Event):
    """The creator (or a moderator) took a seat from its occupant: in the lobby the seat is freed
    (later seats move up one, ``level`` is None); in a match an AI player of ``level`` takes it."""

    seat: int
    player: Player | None = None
    by: Player
    level: str | None = None


class OptionsChanged(Event):
    """The creator (or a moderator) changed the options of an open lobby (the whole new set)."""

    options: dict[str, Any]
    max_seats: int
    turn_seconds: float
    by: Player


EVENT_TYPES: dict[str, type[Event]] = {
    cls.__name__: cls
    for cls in (TableCreated, RoomAttached, PlayerJoined, PlayerLeft, BotsAdded, MatchStarted,
                MovePlayed, SeatTakenByBot, MatchFinished, TableCancelled, PlayerKicked, OptionsChanged,
                RematchAsked, SeatReserved)
}


def _player_joined_v1(data: dict[str, Any]) -> dict[str, Any]:
    # v1 (first release) kept the player flat and had no locale: the lobby then spoke Spanish only.
    return {"seat": data["seat"],
            "player": {"platform": data["platform"], "user": data["user"], "name": data.get("name", "")},
            "locale": "es"}


# (type, from version) -> a function from that version's data to the next version's.
UPCASTERS: dict[tuple[str, int], Callable[[dict[str, Any]], dict[str, Any]]] = {
    ("PlayerJoined", 1): _player_joined_v1,
}


class Stored(BaseModel):
    """An event as read back from a stream, with its envelope."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    event: Event
    at: float
    cmd: str


# Events whose fields are all plain JSON values (ints, strings): their ``model_dump(mode="json")`` is
# their ``__dict__``, written without pydantic's serializer.
_FLAT: frozenset[type[Event]] = frozenset({MatchStarted})

# A move, most of every table's events, is written compactly: ``{"M": [seat, move, cause], "at": ...,
# "cmd": ...}`` (its fields by position, no type name, no schema version: a MovePlayed of a new shape
# would be written in the envelope again).  A move in the envelope (written before) reads as well.
MOVE = "M"


def encode(event: Event, *, at: float, cmd: str) -> str:
    """The JSON of an event: a move compactly (:data:`MOVE`), any other in its envelope at its model's
    current schema version."""
    if type(event) is MovePlayed:
        d = event.__dict__
        return orjson.dumps({MOVE: (d["seat"], d["move"], d["cause"]), "at": at, "cmd": cmd}).decode()
    data = event.__dict__ if type(event) in _FLAT else event.model_dump(mode="json")
    env = {"type": type(event).__name__, "v": event.schema_version, "at": at, "cmd": cmd, "data": data}
    try:
        return orjson.dumps(env).decode()
    except TypeError:  # a key that is not a string (the option is slower, so only when needed)
        return orjson.dumps(env, option=orjson.OPT_NON_STR_KEYS).decode()


def envelope(env: dict[str, Any]) -> dict[str, Any]:
    """An event as parsed from its JSON, in the envelope ``{"type", "v", "at", "cmd", "data"}``
    whichever way it was written (a compact move is spelled out): for readers of raw events."""
    move = env.get(MOVE)
    if move is None:
        return env
    seat, mv, cause = move
    return {"type": "MovePlayed", "v": MovePlayed.schema_version, "at": env.get("at", 0.0),
            "cmd": env.get("cmd", ""), "data": {"seat": seat, "move": mv, "cause": cause}}


def decode(raw: str | bytes) -> Stored:
    """Read an event back, upcasting old schema versions to the current model."""
    return decode_envelope(orjson.loads(raw))


def decode_envelope(env: dict[str, Any], types: dict[str, type[Event]] | None = None) -> Stored:
    """:func:`decode` of an event already parsed from its JSON (``types``: the aggregate's event
    types, a table's by default)."""
    if MOVE in env and types is None:
        env = envelope(env)
    cls = (EVENT_TYPES if types is None else types)[env["type"]]
    version, data = env.get("v", 1), env["data"]
    while version < cls.schema_version:
        data = UPCASTERS[(env["type"], version)](data)
        version += 1
    return Stored(event=cls.model_validate(data), at=env.get("at", 0.0), cmd=env.get("cmd", ""))
