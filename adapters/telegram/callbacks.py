"""Callback data of the bot's buttons (Telegram allows 64 bytes).

A move button carries the outbox action token itself (signed, bound to table, seat and version; at
most 59 bytes, and it starts with the token format digit ``1``).  Lobby and settings buttons are not
moves: they carry typed :class:`~aiogram.filters.callback_data.CallbackData` with short prefixes,
and what they stand for is submitted as a typed command (:mod:`adapters.telegram.menu`), not text.
"""

from __future__ import annotations

import re
from typing import Any

from aiogram.filters.callback_data import CallbackData

TOKEN_RE = re.compile(r"^1[A-Za-z0-9_-]{1,64}\.[0-9a-z]+\.[0-9a-z]+\.")

GAMES = {"c": "cinquillo", "5": "535"}


class Lobby(CallbackData, prefix="lb"):
    """A lobby button: ``op`` is ``join``, ``leave``, ``bots``, ``start``, ``cancel`` or ``set``."""

    op: str
    table: str


class Daily(CallbackData, prefix="dy"):
    """The greeting's "Daily Cinquillo" / "Daily 535": ``/daily`` for that game (``game``: a key of
    :data:`GAMES`), as if typed."""

    game: str


class Cfg(CallbackData, prefix="cf"):
    """The settings keyboard of a new table; its whole state travels in the button.

    ``where`` is ``p`` (``/play`` in a private chat) or ``g`` (``/new`` in a group); ``game`` a key of
    :data:`GAMES`; ``flags`` a bit set of :data:`FLAGS`; ``dir`` and ``target`` indexes into
    :data:`DIRECTIONS` and :data:`TARGETS` (0: the game's default); ``turn`` an index into
    :data:`TURNS` (0: the service's default); ``op`` what the button does (``show``, ``n`` next
    player count, ``t<i>`` toggle flag i, ``d`` / ``g`` / ``s`` the next direction / target /
    turn timer, ``go``).
    """

    where: str
    game: str
    players: int
    flags: int
    dir: int = 0
    target: int = 0
    turn: int = 0
    op: str = "show"


# The options the keyboard offers, per game: (label key, the engine options when the flag is on).
FLAGS: dict[str, list[tuple[str, dict[str, Any]]]] = {
    "c": [("tg.opt.tradicional", {"preset": "tradicional"}), ("tg.opt.chips", {"chips": True}),
          ("tg.opt.points", {"points": True}), ("tg.opt.double_turn", {"double_turn": True}),
          ("tg.opt.teams", {"teams": True}), ("tg.opt.cabron", {"cabron": True})],
    "5": [("tg.opt.short", {"hand_size": 5, "target": 10})],
}
# The values the cycling buttons step through (index 0 of each: not given, the default applies).
DIRECTIONS: tuple[str | None, ...] = (None, "clockwise", "counterclockwise")
TARGETS: tuple[int | None, ...] = (None, 10, 20, 30, 50)
TURNS: tuple[int | None, ...] = (None, 0, 30, 60, 120)
