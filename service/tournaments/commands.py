"""What is asked of a tournament, typed once.  Pure.

On the tournaments' stream a command is a :class:`~service.domain.commands.TableCommand` whose
``table`` is the tournament id: ``tournament`` with ``args.action`` (open, join, leave, start, cancel:
from the chat or a sign-up button) or ``table_finished`` (the service's own: a table of the
tournament finished, ``args.record`` its ratings record).  :func:`request_of` types it, as
``TableCommand.request`` types a table's, so that ``decide`` matches on types.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from service.domain.commands import TableCommand


class _Request(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore")


class Open(_Request):
    """``/tournament <game> [rounds=n] [options]``: sign-up opens in a group."""

    action: Literal["open"]
    game: str = ""
    options: dict[str, Any] = Field(default_factory=dict)
    players: int | None = None
    rounds: int | None = None


class Enter(_Request):
    """``/tournament join`` or the sign-up's button."""

    action: Literal["join"]


class Withdraw(_Request):
    """``/tournament leave`` or the sign-up's button, before the start."""

    action: Literal["leave"]


class Begin(_Request):
    """``/tournament start`` or the sign-up's button: the first round is drawn."""

    action: Literal["start"]


class Cancel(_Request):
    """``/tournament cancel``."""

    action: Literal["cancel"]


class TableFinished(_Request):
    """A table of the tournament finished (the worker's report): ``record`` is its ratings record."""

    action: Literal["table_finished"]
    table: str = ""
    record: dict[str, Any] = Field(default_factory=dict)


class Unknown(_Request):
    """An action no tournament knows, or arguments without its shape (``error``)."""

    action: str
    error: str | None = None


Typed = Open | Enter | Withdraw | Begin | Cancel | TableFinished
_REQUEST: TypeAdapter[Typed] = TypeAdapter(Annotated[Typed, Field(discriminator="action")])
_KNOWN = frozenset(n for m in get_args(Typed) for n in get_args(m.model_fields["action"].annotation))
FINISHED_NAME = "table_finished"  # the command name of a table's report (every other is "tournament")


def request_of(cmd: TableCommand) -> Typed | Unknown:
    """The typed form of a tournament command (:class:`Unknown` when it has none)."""
    action = FINISHED_NAME if cmd.name == FINISHED_NAME else str(cmd.args.get("action"))
    if action not in _KNOWN:
        return Unknown(action=action)
    try:
        return _REQUEST.validate_python({**cmd.args, "action": action})
    except ValidationError as e:
        first = e.errors()[0]
        return Unknown(action=action, error=".".join(map(str, first["loc"])) or first["msg"])
