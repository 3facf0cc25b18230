"""Callback data of the bot's buttons (Telegram allows 64 bytes).

A move button carries the outbox action token itself (signed, bound to table, seat and version; at
most 59 bytes, and it starts with the token format digit ``1``).  Lobby and settings buttons are not
moves: they carry typed :class:`~aiogram.filters.callback_data.CallbackData` with short prefixes.
"""

from __future__ import annotations

import re

from aiogram.filters.callback_data import CallbackData

TOKEN_RE = re.compile(r"^1[A-Za-z0-9_-]{1,64}\.[0-9a-z]+\.[0-9a-z]+\.")

GAMES = {"c": "cinquillo", "5": "535"}


class Lobby(CallbackData, prefix="lb"):
    """A lobby button: ``op`` is ``join``, ``leave``, ``bots``, ``start``, ``cancel`` or ``set``."""

    op: str
    table: str


class Cfg(CallbackData, prefix="cf"):
    """The settings keyboard of a new table; its whole state travels in the button.

    ``where`` is ``p`` (``/play`` in a private chat) or ``g`` (``/new`` in a group); ``game`` a key of
    :data:`GAMES`; ``flags`` a bit set of :data:`FLAGS`; ``op`` what the button does (``show``,
    ``n`` next player count, ``t<i>`` toggle flag i, ``go``).
    """

    where: str
    game: str
    players: int
    flags: int
    op: str


# The options the keyboard offers, per game: (label key, protocol words when the flag is on).
FLAGS: dict[str, list[tuple[str, str]]] = {
    "c": [("tg.opt.tradicional", "tradicional"), ("tg.opt.chips", "chips"), ("tg.opt.points", "points"),
          ("tg.opt.double_turn", "doble"), ("tg.opt.teams", "teams")],
    "5": [("tg.opt.short", "hand_size=5 target=10")],
}


def options_words(cfg: Cfg) -> str:
    """The ``/play`` or ``/new`` arguments a settings keyboard stands for."""
    words = [GAMES[cfg.game], f"players={cfg.players}"]
    words += [w for i, (_, w) in enumerate(FLAGS[cfg.game]) if cfg.flags >> i & 1]
    return " ".join(words)
