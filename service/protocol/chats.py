"""In which kinds of chat each command may be sent: the one table the parser, the worker, ``/help``
and the docs follow.

A chat is ``private`` (a person and the bot) or a ``group``.  Most commands work in both; ``/play``
(a match against AI players at once) is for a private chat, since in a group it would point the
group's commands at a new table while an earlier match still posts there: a group opens a table
with ``/new`` and fills it with ``/join`` and ``/bots``.  A ``/tournament`` is a group's: its sign-up
message, standings and podium are posted there (its tables' hands still go to each person).
"""

from __future__ import annotations

PRIVATE, GROUP = "private", "group"
KINDS = (PRIVATE, GROUP)

_BOTH = frozenset(KINDS)

COMMAND_CHATS: dict[str, frozenset[str]] = {
    "new": _BOTH, "join": _BOTH, "leave": _BOTH, "bots": _BOTH, "start": _BOTH, "cancel": _BOTH,
    "play": frozenset({PRIVATE}),
    "move": _BOTH, "hand": _BOTH, "rules": _BOTH, "stats": _BOTH, "lang": _BOTH, "replay": _BOTH,
    "help": _BOTH, "kick": _BOTH, "set": _BOTH, "rating": _BOTH, "top": _BOTH,
    "tournament": frozenset({GROUP}),
    "daily": _BOTH,
}
"""Every chat command (its canonical name) and the chat kinds it is accepted in.  A command that is
refused somewhere has a message ``wrong_chat.<command>`` saying where it belongs (both languages)."""


MODERATED = frozenset({"start", "bots", "kick", "set", "cancel"})
"""The commands only a table's creator, or a moderator of its room (a group admin, as the platform
says), may send: an adapter asks its platform whether the sender moderates only for these."""


def allowed(command: str, kind: str) -> bool:
    """Whether ``command`` may be sent in a chat of ``kind``.  Commands outside the table (the
    service's own ``action`` and ``tick``) are not chat commands and are not restricted here."""
    return kind in COMMAND_CHATS.get(command, _BOTH)


def restricted() -> dict[str, frozenset[str]]:
    """The commands that some chat kind refuses, with the kinds they are for."""
    return {name: kinds for name, kinds in COMMAND_CHATS.items() if kinds != _BOTH}
