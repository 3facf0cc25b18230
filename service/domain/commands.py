"""Commands: what someone asks a table to do, as it travels on a command stream.

A command is imperative and may be refused.  Its ``id`` makes it idempotent: however many times a
stream delivers it, it is applied at most once.  ``name`` is a protocol command (``join``,
``move``...), ``action`` (a button's move: the claims of its signed action token), or ``tick`` (a
deadline fired: a turn timer or an AI player's turn), which the service sends itself.

On the stream a command is ``name`` and ``args`` (JSON); in the process it is also typed, once:
:attr:`TableCommand.request` is one of the ``Request`` models of :mod:`service.domain.requests` (a
pydantic union on ``name``), so ``decide`` matches on types instead of checking what ``args`` hold.
The command itself is a plain object, read without pydantic (the worker's hot path: see
:class:`TableCommand`).
"""

from __future__ import annotations

from typing import Any

import orjson

from service.domain.identities import Player, Room
from service.domain.requests import Create, DailyTable, Rematch, SeatTable, Typed, Unknown, parse_request

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
