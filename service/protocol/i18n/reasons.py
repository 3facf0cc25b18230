"""Why a command or a move was refused, in the player's language (rule G-2).

Two kinds of refusal reach a player: a :class:`service.protocol.parse.ProtocolError` (the text is not a
valid command; message ``error.<code>``) and an engine ``IllegalMove`` (the move is not allowed;
message ``illegal.<code>``, or ``illegal.<code>.<reason>`` when the engine gives a finer
``reason``).  Both carry ``params``; here they are turned into words (cards named, lists joined)
before they fill the message.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from service.protocol.i18n import msgids, translate
from service.protocol.i18n.render import card_name, join
from service.protocol.parse import ProtocolError

__all__ = ["error_text", "illegal_text"]


def error_text(locale: str | None, error: ProtocolError) -> str:
    """The reply to a refused command: the error's message, with the argument named in words and
    the command's usage line (``error.missing_argument`` -> "Falta el juego… Uso: /nueva …")."""
    if error.code == "wrong_chat" and f"wrong_chat.{error.params.get('command')}" in _known():
        return translate(locale, f"wrong_chat.{error.params['command']}")  # says where it belongs
    params: dict[str, Any] = dict(error.params)
    if "name" in params:
        params["name"] = translate(locale, f"arg.{params['name']}")
    if "command" in params and error.code != "unknown_command":
        params["usage"] = translate(locale, f"usage.{params['command']}")
    return translate(locale, f"error.{error.code}", **params)


def _cards(game: str | None, value: Any, locale: str | None, word: str = "and") -> str:
    """Cards from an IllegalMove's params in words: Cinquillo codes by name, 535 ranks as numbers."""
    if isinstance(value, (list, tuple)):
        if game == "cinquillo":
            return join([card_name(str(c), locale) for c in value], locale, word=word)
        return " ".join(map(str, value))
    return card_name(str(value), locale) if game == "cinquillo" else str(value)


def illegal_text(locale: str | None, game: str | None, code: str,
                 params: Mapping[str, Any] | None = None) -> str:
    """The reason an engine refused a move (``IllegalMove.code`` and ``.params``), for ``game``.

    Parameters the messages use: ``cards`` (the move's cards; Cinquillo's ``card``), ``pile``,
    ``needed`` and ``playable`` (cards that would do), ``limit``, ``count``.
    """
    raw = dict(params or {})
    words: dict[str, Any] = {"limit": raw.get("limit", ""), "count": raw.get("count", "")}
    cards = raw.get("cards", raw.get("card"))
    words["cards"] = _cards(game, cards, locale) if cards is not None else ""
    words["pile"] = _cards(game, raw.get("pile", []), locale)
    for key in ("needed", "playable"):
        words[key] = _cards(game, raw.get(key, []), locale, word="or")
    msgid = f"illegal.{code}"
    reason = raw.get("reason")
    if isinstance(reason, str) and f"{msgid}.{reason}" in _known():
        msgid = f"{msgid}.{reason}"
    if msgid not in _known():
        msgid = "illegal.illegal"  # a code the catalogue lacks still gets a sentence, not a key
    return translate(locale, msgid, **words)


def _known() -> set[str]:
    return msgids("messages") | msgids("messages", "es")
