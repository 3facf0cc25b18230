"""Telegram's "/" menu: the bot's commands, per chat type and in both languages (``setMyCommands``).

Spanish speakers get the Spanish aliases the protocol accepts (``/mano``, ``/nueva``...: the protocol
says which, :func:`service.protocol.names.shown_name`); everyone else the English names.  Registered
once when the bot starts; a failure is logged, never fatal.
"""

from __future__ import annotations

from aiogram import Bot
from aiogram.exceptions import TelegramAPIError
from aiogram.types import BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats

from service.foundation import logs
from service.protocol.i18n import translate
from service.protocol.names import shown_name

# The commands of each chat type, in menu order.  (/start stays /start in Spanish too: Telegram's
# own button sends it.)
PRIVATE = ["start", "play", "daily", "hand", "rules", "stats", "lang", "help"]
GROUP = ["new", "join", "leave", "start", "hand", "bots", "set", "kick", "cancel", "daily", "stats", "lang",
         "rules", "help"]


def commands(kind: str, locale: str) -> list[BotCommand]:
    """The menu of a chat ``kind`` (``private`` or ``group``) in ``locale``."""
    names = PRIVATE if kind == "private" else GROUP
    return [BotCommand(command=name if kind == "private" and name == "start" else shown_name(name, locale),
                       description=translate(locale, f"tg.cmd.{kind}.{name}"))
            for name in names]


async def register(bot: Bot) -> int:
    """Set the menus (4 calls: two chat types, two languages); returns how many were set."""
    done = 0
    scopes = (("private", BotCommandScopeAllPrivateChats()), ("group", BotCommandScopeAllGroupChats()))
    for kind, scope in scopes:
        for locale in ("en", "es"):
            try:
                await bot.set_my_commands(commands(kind, locale), scope=scope,
                                          language_code=None if locale == "en" else "es")
                done += 1
            except TelegramAPIError as e:
                logs.get("telegram").warning("set_my_commands_failed", kind=kind, locale=locale,
                                             error=str(e)[:200])
    return done
