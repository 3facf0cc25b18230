"""Typed requests: a command's ``name`` and ``args`` read once into one of the :data:`Request` models (a
pydantic union on ``name``), so that ``decide`` matches on types instead of checking what ``args``
hold.  :func:`parse_request` makes them, sharing the frozen models of commands it has read before.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from service.domain.identities import Player, Room


class _Request(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class Create(_Request):
    """``/new`` (a lobby) or ``/play`` (a match against AI players at once): the commands that create
    their table — the one place that says so (see :data:`CREATING`)."""

    name: Literal["new", "play"]
    game: str = ""
    options: dict[str, Any] = Field(default_factory=dict)
    players: int | None = None
    # ``/play``: the AI players' level (None: the service's default); any other value is refused.
    level: Literal["easy", "medium", "hard"] | None = None
    # The table the room showed before (the gateway's note, for the worker to restore on a refusal).
    room_was: str | None = None

    @property
    def with_bots(self) -> bool:
        """``/play``: AI players fill the seats and the match starts at once."""
        return self.name == "play"


class Join(_Request):
    """``/join``; ``link``: a deep link (``/start <table>``) opened by someone."""

    name: Literal["join"]
    link: bool = False


class Bots(_Request):
    """``/bots n level``: AI players sit down in a lobby."""

    name: Literal["bots"]
    n: int = 1
    level: str | None = None


class Kick(_Request):
    """``/kick seat`` (seats counted from 1)."""

    name: Literal["kick"]
    seat: Annotated[int, Field(strict=True)] | None = None


class SetOptions(_Request):
    """``/set options``: an open lobby's options."""

    name: Literal["set"]
    options: dict[str, Any] = Field(default_factory=dict)
    players: int | None = None


class Move(_Request):
    """``/move m``, in the engine's notation."""

    name: Literal["move"]
    move: str = ""

    @field_validator("move", mode="before")
    @classmethod
    def _text(cls, v: Any) -> str:
        return str(v)


class Tick(_Request):
    """A deadline fired for the table at ``version`` (a turn timer, an AI player's turn)."""

    name: Literal["tick"]
    version: int | None = None


class SeatTable(_Request):
    """A tournament round's table, created, seated and started at once on the round's seed (the
    tournament director's own command, service.tournaments; no chat command or button makes it).
    ``seats``: per seat ``{"player": {...}, "locale": ...}`` or ``{"bot": level}``."""

    name: Literal["tournament_table"]
    tournament: str
    round: int
    game: str
    options: dict[str, Any] = Field(default_factory=dict)
    turn_seconds: float = 0.0
    seed: str
    seats: list[dict[str, Any]]


class Press(_Request):
    """A button's move: what its action token claims (seat, table version, move), opened once by the
    gateway; ``decide`` checks that the claims still hold.  A command without them (written before
    the gateway opened tokens itself) carries the token beside, in the command, for ``decide`` to open."""

    name: Literal["action"]
    seat: int | None = None
    version: int | None = None
    move: str | None = None


class DailyTable(_Request):
    """A person's attempt at a deal of the day (service.domain.daily): the table created, seated (the
    person at seat 1, AI players of the daily level beside) and started on the day's ``seed`` at once;
    for an attempt that exists, its hand again.  The gateway's own command for ``/daily`` and the web
    table's "Daily deal" (no chat command names it).  ``until``: when the day's embargo lifts."""

    name: Literal["daily_table"]
    game: str
    day: int
    seed: str
    until: float


class Rematch(_Request):
    """A finished table's rematch, from the worker (service.write.finishing) once a person asked for it
    (``RematchAsked`` on table ``of``): the first creates the table with the same game, options, turn
    timer, rooms and seats (``seats``: per seat ``{"player": {...}, "locale": ...}`` or ``{"bot":
    level}``; the asker seated, the other people's seats kept for them), a later one seats its person
    in the seat kept for them.  No chat command or button makes it."""

    name: Literal["rematch"]
    of: str
    game: str
    options: dict[str, Any] = Field(default_factory=dict)
    turn_seconds: float = 0.0
    seats: list[dict[str, Any]]
    rooms: list[Room] = Field(default_factory=list)
    room_people: list[Player | None] = Field(default_factory=list)


class Plain(_Request):
    """A command without arguments."""

    name: Literal["leave", "start", "cancel", "hand", "replay"]


class Unknown(_Request):
    """A name no table knows, or arguments that do not have their command's shape (``error``)."""

    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    error: str | None = None


Typed = Create | Join | Bots | Kick | SetOptions | Move | Press | Tick | SeatTable | DailyTable | Rematch \
    | Plain
Request = Annotated[Typed, Field(discriminator="name")]
_REQUEST: TypeAdapter[Typed] = TypeAdapter(Request)
_KNOWN = frozenset(n for m in (Create, Join, Bots, Kick, SetOptions, Move, Press, Tick, SeatTable,
                                 DailyTable, Rematch, Plain)
                   for n in get_args(m.model_fields["name"].annotation))

# The commands that create their table (every other one is for a table that exists).
CREATING = frozenset(get_args(Create.model_fields["name"].annotation))


# Typed requests already made, by (name, args) when every argument is a plain value: the worker reads
# the same few hundred (a card played, a tick of some version) again and again, and a frozen model can
# be shared.  Bounded: cleared when full.
_TYPED: dict[tuple[Any, ...], Typed | Unknown] = {}
_TYPED_MAX = 8192
_SCALARS = (str, int, float, bool, type(None))


def parse_request(name: str, args: dict[str, Any]) -> Typed | Unknown:
    """The typed form of a command's ``name`` and ``args`` (:class:`Unknown` when it has none)."""
    if name not in _KNOWN:
        return Unknown(name=name, args=args)
    key: tuple[Any, ...] | None = (name, *args.items())
    typed_key = False
    for v in args.values():
        if type(v) is str:
            continue
        if type(v) not in _SCALARS:
            key = None
            break
        typed_key = True  # 1, True and 1.0 are one dict key, not one argument: their types too
    if key is not None and typed_key:
        key = (*key, *map(type, args.values()))
    if key is not None:
        known = _TYPED.get(key)
        if known is not None:
            return known
    try:
        typed: Typed | Unknown = _REQUEST.validate_python({**args, "name": name})
    except ValidationError as e:
        first = e.errors()[0]
        typed = Unknown(name=name, args=args, error=".".join(map(str, first["loc"])) or first["msg"])
    if key is not None:
        if len(_TYPED) >= _TYPED_MAX:
            _TYPED.clear()
        _TYPED[key] = typed
    return typed
