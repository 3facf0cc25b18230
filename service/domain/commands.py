"""Commands: what someone asks a table to do, as it travels on a command stream.

A command is imperative and may be refused.  Its ``id`` makes it idempotent: however many times a
stream delivers it, it is applied at most once.  ``name`` is a protocol command (``join``,
``move``...), ``action`` (a button's move: the claims of its signed action token), or ``tick`` (a
deadline fired: a turn timer or an AI player's turn), which the service sends itself.

On the stream a command is ``name`` and ``args`` (JSON); in the process it is also typed, once:
:attr:`TableCommand.request` is one of the :data:`Request` models below (a pydantic union on
``name``), so ``decide`` matches on types instead of checking what ``args`` hold.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, TypeAdapter, ValidationError, field_validator

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


def parse_request(name: str, args: dict[str, Any]) -> Typed | Unknown:
    """The typed form of a command's ``name`` and ``args`` (:class:`Unknown` when it has none)."""
    if name not in _KNOWN:
        return Unknown(name=name, args=args)
    try:
        return _REQUEST.validate_python({**args, "name": name})
    except ValidationError as e:
        first = e.errors()[0]
        return Unknown(name=name, args=args, error=".".join(map(str, first["loc"])) or first["msg"])


class TableCommand(BaseModel):
    """A command addressed to one table, as written to its command stream (field ``c``, JSON)."""

    # cache_strings="keys": the JSON parser keeps field names, not the ids it reads (each command
    # id and table id is new: caching them filled a worker's memory with strings never seen again)
    model_config = ConfigDict(frozen=True, cache_strings="keys")

    id: str
    table: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    actor: Player | None = None
    room: Room | None = None
    locale: str = "es"
    token: str | None = None
    at: float = 0.0
    # The platform says the actor moderates the room (a group admin): may do what the creator does.
    moderator: bool = False
    _request: Typed | Unknown = PrivateAttr()

    def model_post_init(self, context: Any, /) -> None:
        # Typed once, when the command is built or read from its stream (name and args are frozen).
        self._request = parse_request(self.name, self.args)

    @property
    def request(self) -> Typed | Unknown:
        """What the command asks, typed (see :func:`parse_request`)."""
        return self._request

    @property
    def creates_table(self) -> bool:
        """Whether this command creates its table (``/new``, ``/play``, a tournament's table, a daily
        deal's, a rematch: the first one creates it, a later one finds it made)."""
        return isinstance(self._request, Create | SeatTable | DailyTable | Rematch)

    def dumps(self) -> str:
        """The JSON form written to the stream."""
        return self.model_dump_json(exclude_none=True)
