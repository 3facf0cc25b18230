"""The private chat: ``/start`` (greeting, or a deep link to a table), ``/play``, and the rest."""

from __future__ import annotations

from aiogram import F, Router
from aiogram.filters import Command, CommandObject, CommandStart
from aiogram.types import Message

from adapters.telegram.consumer import resend_slot
from adapters.telegram.content import FINAL_RANK, HAND_PREFIX, MAIN, PLATFORM, Post
from adapters.telegram.handlers.people import player_of, said_by
from adapters.telegram.menu import games_content, greeting_content
from adapters.telegram.sender import Sender
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.requests import Plain
from service.platform.platform_state import PlatformState
from service.protocol.i18n import translate
from service.protocol.names import names_of
from service.write.gateway import Gateway


def _command_id(message: Message) -> str:
    return f"tg:m:{message.chat.id}:{message.message_id}"


async def hand_handler(message: Message, gateway: Gateway, room: Room) -> None:
    """``/hand`` (in private or in a group): the hand again, as a new message at the bottom of the
    private chat (its command id has its own prefix, :data:`HAND_PREFIX`, so that the hand it causes
    is sent anew, not as an edit of the one far up, which would change nothing the player sees)."""
    assert message.from_user is not None
    hand = f"{HAND_PREFIX}{message.chat.id}:{message.message_id}"
    await gateway.submit(said_by(message.from_user, room, hand), request=Plain(name="hand"))


async def deep_link_handler(message: Message, command: CommandObject, gateway: Gateway,
                            platform_state: PlatformState, sender: Sender, room: Room) -> None:
    """``t.me/<bot>?start=<table>``: show the player's hand of that table here, or join its lobby."""
    assert message.from_user is not None
    table = command.args or ""
    if await resend_slot(platform_state, sender, room.chat, table):
        return
    await gateway.submit(said_by(message.from_user, room, _command_id(message)), message.text)


async def start_handler(message: Message, gateway: Gateway, sender: Sender) -> None:
    """``/start``: greet in the user's language and offer the games."""
    assert message.from_user is not None
    user = message.from_user
    locale = await gateway.locale_of(player_of(user), user.language_code)
    text = translate(locale, "tg.welcome", name=user.first_name)
    await sender.deliver(Post(str(message.chat.id), greeting_content(locale, text), _command_id(message)))


async def play_handler(message: Message, command: CommandObject, gateway: Gateway, sender: Sender,
                       platform_state: PlatformState, room: Room) -> None:
    """``/play <game> [options]`` starts a match against AI players; a bare ``/play`` offers the games."""
    assert message.from_user is not None
    user = message.from_user
    if not command.args:
        locale = await gateway.locale_of(player_of(user), user.language_code)
        content = games_content(locale, "p", translate(locale, "tg.pick_game"))
        await sender.deliver(Post(str(message.chat.id), content, _command_id(message)))
        return
    await end_previous(gateway, platform_state, player_of(user), room, _command_id(message),
                       user.language_code)
    await gateway.submit(said_by(user, room, _command_id(message)), message.text)


async def end_previous(gateway: Gateway, platform_state: PlatformState, user: Player, room: Room,
                       command_id: str, language: str | None) -> None:
    """Before a new match in a private chat: cancel the chat's match still running, so that only one
    match is ever playable here (its message loses its buttons: the service says it was cancelled).
    A match whose final result the chat already shows is left alone."""
    old = await gateway.table_of(room)
    if old is None:
        return
    ref = await platform_state.get_message_ref(PLATFORM, room.chat, old, MAIN)
    if ref is not None and ref.rank[1] == FINAL_RANK:
        return
    await gateway.submit(Input(user, room, command_id=f"{command_id}:x", language=language),
                         request=Plain(name="cancel"))


async def text_handler(message: Message, gateway: Gateway, room: Room) -> None:
    """Any other text goes to the service, which parses the chat command protocol."""
    assert message.from_user is not None
    await gateway.submit(said_by(message.from_user, room, _command_id(message)), message.text)


def router() -> Router:
    """A new router of this feature (each Dispatcher needs its own)."""
    r = Router(name="private")
    r.message.filter(F.chat.type == "private")
    r.message.register(deep_link_handler, CommandStart(deep_link=True))
    r.message.register(start_handler, CommandStart())
    r.message.register(play_handler, Command(*names_of("play"), ignore_case=True))
    r.message.register(hand_handler, Command(*names_of("hand"), ignore_case=True))
    r.message.register(text_handler, F.text)
    return r
