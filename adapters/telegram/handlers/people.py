"""Who and where, in the service's terms: Telegram users and chats as players and rooms."""

from __future__ import annotations

from aiogram import Bot
from aiogram.exceptions import ClientDecodeError, TelegramAPIError
from aiogram.types import Chat, User

from adapters.telegram.render import PLATFORM
from service.identities import Player, Room

# The commands the table's creator, or a group's admin, may send (the service checks which it is).
MODERATED = frozenset({"start", "bots", "kick", "set", "cancel"})


def player_of(user: User) -> Player:
    """The service's player for a Telegram user (identity is the numeric user id)."""
    return Player(platform=PLATFORM, user=str(user.id), name=user.full_name or user.username or str(user.id))


def room_of(chat: Chat) -> Room:
    """The service's room for a Telegram chat (groups and supergroups are both ``group``)."""
    return Room(platform=PLATFORM, chat=str(chat.id), kind="private" if chat.type == "private" else "group")


async def is_moderator(bot: Bot, chat: Chat, user: User) -> bool:
    """Whether Telegram says ``user`` administers the group ``chat`` (its creator or an admin)."""
    if chat.type not in ("group", "supergroup"):
        return False
    try:
        member = await bot.get_chat_member(chat.id, user.id)
    except (TelegramAPIError, ClientDecodeError):
        return False  # not known to be an admin: the creator check alone applies
    return member.status in ("creator", "administrator")
