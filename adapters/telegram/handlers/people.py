"""Who and where, in the service's terms: Telegram users and chats as players and rooms."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiogram import BaseMiddleware, Bot
from aiogram.exceptions import ClientDecodeError, TelegramAPIError
from aiogram.types import CallbackQuery, Chat, Message, TelegramObject, User

from adapters.telegram.content import PLATFORM
from service.domain.identities import Player, Room
from service.domain.inputs import Input, Moderator
from service.platform.platform_state import PlatformState


def player_of(user: User) -> Player:
    """The service's player for a Telegram user (identity is the numeric user id)."""
    return Player(platform=PLATFORM, user=str(user.id), name=user.full_name or user.username or str(user.id))


def said_by(user: User, room: Room, command_id: str, language: str | None = None, *,
            moderator: Moderator = False, room_title: str | None = None) -> Input:
    """The service's input of a Telegram user in ``room`` (``command_id``: from the update, so that a
    redelivery is answered once; ``language``: the user's language unless the chat's is given)."""
    return Input(player_of(user), room, command_id=command_id,
                 language=language if language is not None else user.language_code,
                 moderator=moderator, room_title=room_title)


def room_of(chat: Chat, chat_id: str | None = None) -> Room:
    """The service's room for a Telegram chat (groups and supergroups are both ``group``); ``chat_id``:
    the id the service knows the chat by, when it is not the chat's own (a group that moved)."""
    return Room(platform=PLATFORM, chat=chat_id or str(chat.id),
                kind="private" if chat.type == "private" else "group")


class RoomOf(BaseMiddleware):
    """Gives every message and button handler a ``room``: the service's room for the update's chat.

    A group upgraded to a supergroup has a new chat id; the service goes on knowing the room by the
    old one (:meth:`service.platform.platform_state.PlatformState.room_chat`), so that the table it shows, its
    language and its counters carry on.  ``room`` is None for a button on a message Telegram no longer
    gives (too old).
    """

    async def __call__(self, handler: Callable[[TelegramObject, dict[str, Any]], Awaitable[Any]],
                       event: TelegramObject, data: dict[str, Any]) -> Any:
        chat = event.chat if isinstance(event, Message) else \
            event.message.chat if isinstance(event, CallbackQuery) and event.message is not None else None
        room = None
        if chat is not None:
            state: PlatformState = data["platform_state"]
            known = await state.room_chat(PLATFORM, str(chat.id)) if chat.type != "private" else None
            room = room_of(chat, known)
        data["room"] = room
        if chat is not None and chat.type == "private" and "sender" in data:
            data["sender"].allow(str(chat.id))  # they wrote to the bot: it may write to them
        return await handler(event, data)


async def is_moderator(bot: Bot, chat: Chat, user: User) -> bool:
    """Whether Telegram says ``user`` administers the group ``chat`` (its creator or an admin)."""
    if chat.type not in ("group", "supergroup"):
        return False
    try:
        member = await bot.get_chat_member(chat.id, user.id)
    except (TelegramAPIError, ClientDecodeError):
        return False  # not known to be an admin: the creator check alone applies
    return member.status in ("creator", "administrator")
