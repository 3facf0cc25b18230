"""Commands: what someone asks a table to do, as it travels on a command stream.

A command is imperative and may be refused.  Its ``id`` makes it idempotent: however many times a
stream delivers it, it is applied at most once.  ``name`` is a protocol command (``join``, ``move``...),
``action`` (a signed action token from a button), or ``tick`` (a deadline fired: a turn timer or an
AI player's turn), which the service sends itself.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from service.identities import Player, Room

# The commands the worker handles; every other protocol command is answered by the gateway.
TABLE_COMMANDS = frozenset({"new", "play", "join", "start", "leave", "bots", "cancel", "move", "hand",
                            "replay", "action", "tick", "kick", "set"})


class TableCommand(BaseModel):
    """A command addressed to one table, as written to its command stream (field ``c``, JSON)."""

    model_config = ConfigDict(frozen=True)

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

    def dumps(self) -> str:
        """The JSON form written to the stream."""
        return self.model_dump_json(exclude_none=True)

    @classmethod
    def loads(cls, raw: str | bytes) -> TableCommand:
        """Read a command back from its JSON form."""
        return cls.model_validate(json.loads(raw))
