"""One person's input as a small value, and the registry of the handlers that answer without a table.
Pure (values and protocols only).

An adapter translates what its platform delivered into an :class:`Input` (who, where, under which
command id, in which language, as a moderator or not, replacing which message) and hands it to the
gateway (:mod:`service.write.gateway`) with the text, button token or typed command it carries.  The
gateway resolves it once into a :class:`Received` (the command id, the person's locale, the time),
parses the text, and looks its command up in :class:`Handlers`: a command answered without a table
(``/help``, ``/rating``, ``/tournament``...) goes to the handler its package registered, a button to
the handler of what its token names (a board, a tournament), everything else to a table.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from service.domain.identities import Player, Room
from service.domain.messages import Action
from service.domain.tokens import Claims

Moderator = bool | Callable[[], Awaitable[bool]]
"""Whether the person moderates the room, as the platform says it: known (a bool), or a question the
gateway asks only for the commands that need it (``chats.MODERATED``: asking may cost a platform call)."""


@dataclass(frozen=True, slots=True)
class Input:
    """One input of a person, as an adapter translates it from its platform.

    ``command_id`` is the adapter's idempotency key (a platform update id, a webhook id): a second
    input with the same id is answered as a duplicate and not acted on (None: the gateway makes a
    fresh one).  ``language``: the platform's language code for the person (their ``/lang`` choice
    wins).  ``moderator``: the platform says the person moderates the room (a group admin), so they
    may do what the table's creator does.  ``replaces``: the platform's reference to the message whose
    button was pressed (a board redraws it there); ``room_title``: a group's name, when the platform
    gives it (the daily deal's share buttons show it)."""

    user: Player
    room: Room
    command_id: str | None = None
    language: str | None = None
    moderator: Moderator = False
    replaces: str | None = None
    room_title: str | None = None


@dataclass(frozen=True, slots=True)
class Received:
    """One input of a person as the gateway received it, and as every handler sees it.

    ``cid`` is the command id (the adapter's own when ``marked``: then a retry of it is answered once,
    not acted on again); ``moderator``: the platform says the person moderates the room (asked only
    for the commands that need it); ``replaces``: the platform's reference to the message whose
    button was pressed (a board redraws it there)."""

    user: Player
    room: Room
    cid: str
    locale: str
    at: float
    marked: bool = False
    moderator: bool = False
    replaces: str | None = None
    # A group's name, when the platform gives it (the daily deal's share buttons name the group).
    room_title: str | None = None

    @property
    def command_id(self) -> str | None:
        """The adapter's idempotency key, if it gave one."""
        return self.cid if self.marked else None


class Reply(Protocol):
    """Answers an input at once, in its room (through the outbox); returns the command id."""

    async def __call__(self, text: str, code: str | None = None, *, locale: str | None = None,
                       actions: list[Action] | None = None, redraw: bool = False) -> str: ...


class CommandHandler(Protocol):
    """Handles a parsed command that no table answers (``name``, ``args``: the parser's)."""

    async def __call__(self, inp: Received, name: str, args: dict[str, Any], reply: Reply) -> str: ...


class PressHandler(Protocol):
    """Handles a button press whose token names something other than a table (already opened)."""

    async def __call__(self, inp: Received, claims: Claims, token: str, reply: Reply) -> str: ...


@dataclass
class Handlers:
    """The gateway's table of handlers: commands by name, and button presses by what the token's
    "table" names (``owns(table id)``, asked in registration order)."""

    commands: dict[str, CommandHandler] = field(default_factory=dict)
    presses: list[tuple[Callable[[str], bool], PressHandler]] = field(default_factory=list)

    def command(self, name: str, handler: CommandHandler) -> None:
        """Answer the command ``name`` with ``handler`` (one handler per name)."""
        if name in self.commands:
            raise ValueError(f"/{name} has a handler already")
        self.commands[name] = handler

    def press(self, owns: Callable[[str], bool], handler: PressHandler) -> None:
        """Hand the presses of tokens whose "table" ``owns`` accepts to ``handler``."""
        self.presses.append((owns, handler))

    def press_handler(self, table: str) -> PressHandler | None:
        """The handler of a token naming ``table`` (None: a table's own move)."""
        return next((h for owns, h in self.presses if owns(table)), None)
