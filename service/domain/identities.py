"""Who plays and where: a player is (platform, user id), a room is (platform, chat id, kind)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict


class Player(BaseModel):
    """A person on a chat platform.  ``name`` is for display only; identity is (platform, user)."""

    model_config = ConfigDict(frozen=True)

    platform: str
    user: str
    name: str = ""

    def same(self, other: Player | None) -> bool:
        """Whether ``other`` is the same person (names may change)."""
        return other is not None and (self.platform, self.user) == (other.platform, other.user)


class Room(BaseModel):
    """A chat where a table is shown: a private chat with one person, or a group."""

    model_config = ConfigDict(frozen=True)

    platform: str
    chat: str
    kind: Literal["private", "group"] = "private"

    def same(self, other: Room | None) -> bool:
        """Whether ``other`` is the same chat."""
        return other is not None and (self.platform, self.chat) == (other.platform, other.chat)
