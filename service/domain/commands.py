"""Commands: what someone asks a table to do, as it travels on a command stream.

A command is imperative and may be refused.  Its ``id`` makes it idempotent: however many times a
stream delivers it, it is applied at most once.  ``name`` is a protocol command (``join``, ``move``...),
``action`` (a signed action token from a button), or ``tick`` (a deadline fired: a turn timer or an
AI player's turn), which the service sends itself.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from service.domain.identities import Player, Room

# The commands that create their table (every other one is for a table that exists);
# ``tournament_table`` is the tournament director's (service.tournaments), never a chat command.
CREATING = frozenset({"new", "play", "tournament_table"})


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

    @property
    def creates_table(self) -> bool:
        """Whether this command creates its table (``/new``, ``/play``)."""
        return self.name in CREATING

    def dumps(self) -> str:
        """The JSON form written to the stream."""
        return self.model_dump_json(exclude_none=True)
