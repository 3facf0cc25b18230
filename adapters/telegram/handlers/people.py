"""Who and where, in the service's terms: Telegram users and chats as players and rooms."""

from __future__ import annotations

from aiogram.types import Chat, User

from adapters.telegram.render import PLATFORM
from service.identities import Player, Room


def player_of(user: User) -> Player:
    """The service's player for a Telegram user (identity is the numeric user id)."""
    return Player(platform=PLATFORM, user=str(user.id), name=user.full_name or user.username or str(user.id))


def room_of(chat: Chat) -> Room:
    """The service's room for a Telegram chat (groups and supergroups are both ``group``)."""
    return Room(platform=PLATFORM, chat=str(chat.id), kind="private" if chat.type == "private" else "group")
