"""The commands the gateway answers itself, without a table: ``/help``, ``/rules``, ``/lang``,
``/stats`` (:func:`register` puts them in its table of handlers, beside the ratings' and the
tournaments' own)."""

from __future__ import annotations

from typing import Any

from service.domain.inputs import Handlers, Received, Reply
from service.protocol.i18n import translate
from service.store.decoding import as_text
from service.store.keys import Keys

GAMES = ("cinquillo", "535")


def register(handlers: Handlers, redis: Any, keys: Keys) -> None:
    """Answer ``/help``, ``/rules``, ``/lang`` and ``/stats``."""

    async def help_(inp: Received, name: str, args: dict[str, Any], reply: Reply) -> str:
        return await reply(translate(inp.locale, "help.text"))

    async def rules(inp: Received, name: str, args: dict[str, Any], reply: Reply) -> str:
        games = [args["game"]] if args.get("game") else GAMES
        return await reply("\n\n".join(translate(inp.locale, f"rules.{g}") for g in games))

    async def lang(inp: Received, name: str, args: dict[str, Any], reply: Reply) -> str:
        new = args["locale"]
        await redis.hset(keys.player_prefs(inp.user.platform, inp.user.user), "locale", new)
        return await reply(translate(new, "lang.changed"), locale=new)

    async def stats(inp: Received, name: str, args: dict[str, Any], reply: Reply) -> str:
        raw = await redis.hgetall(keys.player_stats(inp.user.platform, inp.user.user))
        counts = {as_text(k): int(v) for k, v in raw.items()}
        return await reply(translate(inp.locale, "table.stats", played=counts.get("played", 0),
                                     won=counts.get("won", 0)))

    for name, handler in (("help", help_), ("rules", rules), ("lang", lang), ("stats", stats)):
        handlers.command(name, handler)
