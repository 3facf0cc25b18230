"""Commands: what someone asks a table to do, as it travels on a command stream.

A command is imperative and may be refused.  Its ``id`` makes it idempotent: however many times a
stream delivers it, it is applied at most once.  ``name`` is a protocol command (``join``,
``move``...), ``action`` (a button's move: the claims of its signed action token), or ``tick`` (a
deadline fired: a turn timer or an AI player's turn), which the service sends itself.

On the stream a command is ``name`` and ``args`` (JSON); in the process it is also typed, once:
:attr:`TableCommand.request` is one of the :data:`Request` models below (a pydantic union on
``name``), so ``decide`` matches on types instead of checking what ``args`` hold.  The command itself
is a plain object, read without pydantic (the worker's hot path: see :class:`TableCommand`).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

import orjson
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


# Players and rooms as read from commands, shared (frozen models): the same people send command after
# command, and building a model for each costs more than the rest of reading the command.
_PEOPLE: dict[tuple[Any, ...], Any] = {}
_PEOPLE_MAX = 16384


def _identity(cls: type[Player] | type[Room], value: Any) -> Any:
    if value is None or type(value) is cls:
        return value
    if type(value) is not dict:
        raise TypeError(f"{cls.__name__.lower()} must be an object, not {type(value).__name__}")
    key = (cls, *value.items())
    try:
        known = _PEOPLE.get(key)
    except TypeError:  # a value that is not hashable: not a valid identity anyway
        known = None
    if known is None:
        known = cls.model_validate(value)
        if len(_PEOPLE) >= _PEOPLE_MAX:
            _PEOPLE.clear()
        _PEOPLE[key] = known
    return known


def _text(field: str, value: Any, optional: bool = False) -> Any:
    if type(value) is str or (optional and value is None):
        return value
    raise TypeError(f"command field {field!r} must be a string, not {type(value).__name__}")


_FIELDS = ("id", "table", "name", "args", "actor", "room", "locale", "token", "at", "moderator")


class TableCommand:
    """A command addressed to one table, as written to its command stream (field ``c``, JSON).

    A plain object (``__slots__``), not a pydantic model: the worker reads one per command, and a
    validated model cost it ~20% of its time (bench/results/pipeline.txt).  The constructor checks the
    fields' types (a command that is not one raises ``TypeError``: the worker dead-letters it); the
    identities and the typed request are pydantic models, made once per distinct value and shared.
    Treat it as immutable (:meth:`replace` makes a changed copy)."""

    __slots__ = (*_FIELDS, "request")

    id: str
    table: str
    name: str
    args: dict[str, Any]
    actor: Player | None
    room: Room | None
    locale: str
    token: str | None
    at: float
    # The platform says the actor moderates the room (a group admin): may do what the creator does.
    moderator: bool
    request: Typed | Unknown  # what the command asks, typed once (see parse_request)

    def __init__(self, *, id: str, table: str, name: str, args: dict[str, Any] | None = None,
                 actor: Player | dict[str, Any] | None = None, room: Room | dict[str, Any] | None = None,
                 locale: str = "es", token: str | None = None, at: float = 0.0,
                 moderator: bool = False) -> None:
        if type(id) is not str or type(table) is not str or type(name) is not str:
            for field, value in (("id", id), ("table", table), ("name", name)):
                _text(field, value)  # raises, saying which
        self.id, self.table, self.name = id, table, name
        if args is None:
            args = {}
        elif type(args) is not dict:
            raise TypeError(f"command args must be an object, not {type(args).__name__}")
        self.args = args
        self.actor = _identity(Player, actor)
        self.room = _identity(Room, room)
        self.locale, self.token = _text("locale", locale), _text("token", token, optional=True)
        if type(at) is not float:
            if type(at) is not int:
                raise TypeError(f"command field 'at' must be a number, not {type(at).__name__}")
            at = float(at)
        self.at = at
        if type(moderator) is not bool:
            raise TypeError(f"command field 'moderator' must be a boolean, not {type(moderator).__name__}")
        self.moderator = moderator
        self.request = parse_request(name, args)

    @classmethod
    def loads(cls, raw: str | bytes) -> TableCommand:
        """A command from its JSON form (what :meth:`dumps` wrote); raises ``ValueError`` or
        ``TypeError`` for anything else (an unknown field too)."""
        data = orjson.loads(raw)
        if type(data) is not dict:
            raise TypeError(f"a command is a JSON object, not {type(data).__name__}")
        return cls(**data)

    def dumps(self) -> str:
        """The JSON form written to the stream (fields that are None left out)."""
        out: dict[str, Any] = {"id": self.id, "table": self.table, "name": self.name, "args": self.args}
        if self.actor is not None:
            out["actor"] = self.actor.__dict__
        if self.room is not None:
            out["room"] = self.room.__dict__
        out["locale"] = self.locale
        if self.token is not None:
            out["token"] = self.token
        out["at"], out["moderator"] = self.at, self.moderator
        try:
            return orjson.dumps(out).decode()
        except TypeError:  # an argument with a key that is not a string (the option is slower)
            return orjson.dumps(out, option=orjson.OPT_NON_STR_KEYS).decode()

    def replace(self, **changes: Any) -> TableCommand:
        """A copy with some fields changed (checked as the constructor checks them)."""
        values = {f: getattr(self, f) for f in _FIELDS}
        values.update(changes)
        return TableCommand(**values)

    @property
    def creates_table(self) -> bool:
        """Whether this command creates its table (``/new``, ``/play``, a tournament's table, a daily
        deal's, a rematch: the first one creates it, a later one finds it made)."""
        return isinstance(self.request, Create | SeatTable | DailyTable | Rematch)

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, f) for f in _FIELDS)

    def __eq__(self, other: object) -> bool:
        return type(other) is TableCommand and self._values() == other._values()

    def __hash__(self) -> int:
        return hash((self.id, self.table, self.name))

    def __repr__(self) -> str:
        return "TableCommand(" + ", ".join(f"{f}={getattr(self, f)!r}" for f in _FIELDS) + ")"
