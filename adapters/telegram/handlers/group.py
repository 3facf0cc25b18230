"""Group chats: ``/new`` (a lobby), ``/lang`` and ``/stats`` for the group, other commands to the service,
and a group's upgrade to a supergroup (``migrate_to_chat_id`` / ``migrate_from_chat_id``).

Everything about the group is kept under ``room.chat``, the id the service knows the room by (see
:class:`adapters.telegram.handlers.people.RoomOf`), which is not the chat's own id after an upgrade."""

from __future__ import annotations

from aiogram import Bot, F, Router
from aiogram.filters import Command, CommandObject
from aiogram.types import Message

from adapters.telegram.consumer import OutboxHandler
from adapters.telegram.content import PLATFORM, Content, Post
from adapters.telegram.handlers.people import is_moderator, player_of, said_by
from adapters.telegram.handlers.private import hand_handler
from adapters.telegram.menu import games_content
from adapters.telegram.sender import Sender
from service.domain.identities import Room
from service.domain.inputs import Input
from service.platform.platform_state import PlatformState
from service.protocol.i18n import translate
from service.protocol.names import names_of
from service.protocol.parse import Command as Parsed
from service.write.gateway import Gateway


def _command_id(message: Message) -> str:
    return f"tg:m:{message.chat.id}:{message.message_id}"


async def _language(message: Message, platform_state: PlatformState, room: Room) -> str | None:
    """The group's ``/lang`` choice, else the sender's Telegram language."""
    chosen = await platform_state.chat_locale(PLATFORM, room.chat)
    return chosen or (message.from_user.language_code if message.from_user else None)


async def new_handler(message: Message, command: CommandObject, gateway: Gateway,
                      platform_state: PlatformState, sender: Sender, room: Room) -> None:
    """``/new <game> [options]`` opens a lobby; a bare ``/new`` offers the games and their settings."""
    assert message.from_user is not None
    language = await _language(message, platform_state, room)
    if not command.args:
        locale = await gateway.locale_of(player_of(message.from_user), language)
        content = games_content(locale, "g", translate(locale, "tg.pick_game"))
        await sender.deliver(Post(room.chat, content, _command_id(message)))
        return
    said = said_by(message.from_user, room, _command_id(message), language, room_title=message.chat.title)
    await gateway.submit(said, message.text)


async def lang_handler(message: Message, gateway: Gateway, platform_state: PlatformState,
                       sender: Sender, room: Room) -> None:
    """``/lang es|en`` in a group chooses the group's language: the service parses it (and explains
    the usage if it is wrong), then the group's choice is kept here, not the sender's."""
    assert message.from_user is not None

    async def for_the_group(parsed: Parsed) -> bool:
        if parsed.name != "lang":
            return False
        locale = parsed.args["locale"]
        await platform_state.set_chat_locale(PLATFORM, room.chat, locale)
        await sender.deliver(Post(room.chat, Content(translate(locale, "tg.lang")), _command_id(message)))
        return True

    await gateway.submit(Input(player_of(message.from_user), room, command_id=_command_id(message)),
                         message.text, intercept=for_the_group)


async def stats_handler(message: Message, gateway: Gateway, platform_state: PlatformState,
                        sender: Sender, room: Room) -> None:
    """``/stats`` in a group: the group's finished matches and each person's wins under their latest
    name (counted in Redis by user id as each match ended,
    :meth:`~service.platform.platform_state.PlatformState.record_group_match`), then the sender's own (the
    service's)."""
    assert message.from_user is not None
    language = await _language(message, platform_state, room)
    locale = await platform_state.chat_locale(PLATFORM, room.chat) or \
        await gateway.locale_of(player_of(message.from_user), language)
    matches, people = await platform_state.group_stats(PLATFORM, room.chat)  # by user id
    lines = [translate(locale, "tg.group_stats", matches=matches)]
    if people:
        ranked = sorted(people.items(), key=lambda kv: (-kv[1][1], kv[1][0], kv[0]))
        lines.append(translate(locale, "tg.group_wins",
                               wins=", ".join(f"{name} {n}" for _, (name, n) in ranked)))
    await sender.deliver(Post(room.chat, Content("\n".join(lines)), _command_id(message)))
    said = said_by(message.from_user, room, _command_id(message) + ":u", language)
    await gateway.submit(said, message.text)


async def migrate_handler(message: Message, outbox: OutboxHandler) -> None:
    """The group became a supergroup: Telegram says so in both chats (either may come first)."""
    if message.migrate_to_chat_id:
        old, new = message.chat.id, message.migrate_to_chat_id
    else:
        assert message.migrate_from_chat_id is not None
        old, new = message.migrate_from_chat_id, message.chat.id
    await outbox.migrated(str(old), str(new))


async def command_handler(message: Message, gateway: Gateway, platform_state: PlatformState,
                          bot: Bot, room: Room) -> None:
    """Every other command goes to the service (plain chat in a group is not for the bot).  For the
    commands of a table's creator, Telegram is asked whether the sender is a group admin."""
    assert message.from_user is not None
    language = await _language(message, platform_state, room)
    chat, user = message.chat, message.from_user
    said = said_by(user, room, _command_id(message), language,
                   moderator=lambda: is_moderator(bot, chat, user), room_title=chat.title)
    await gateway.submit(said, message.text)


def router() -> Router:
    """A new router of this feature (each Dispatcher needs its own)."""
    r = Router(name="group")
    r.message.filter(F.chat.type.in_({"group", "supergroup"}))
    r.message.register(migrate_handler, F.migrate_to_chat_id | F.migrate_from_chat_id)
    r.message.register(new_handler, Command(*names_of("new"), ignore_case=True))
    r.message.register(lang_handler, Command(*names_of("lang"), ignore_case=True))
    r.message.register(stats_handler, Command(*names_of("stats"), ignore_case=True))
    r.message.register(hand_handler, Command(*names_of("hand"), ignore_case=True))
    r.message.register(command_handler, F.text.startswith("/"))
    return r
