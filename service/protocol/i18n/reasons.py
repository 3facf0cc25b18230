"""Why a command or a move was refused, in the player's language (rule G-2).

Two kinds of refusal reach a player: a :class:`service.protocol.parse.ProtocolError` (the text is not a
valid command; message ``error.<code>``) and an engine ``IllegalMove`` (the move is not allowed;
message ``illegal.<code>``, or ``illegal.<code>.<reason>`` when the engine gives a finer
``reason``).  Both carry ``params``; here they are turned into words (cards named, lists joined)
before they fill the message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from service.protocol.i18n import msgids, translate
from service.protocol.i18n.render import card_name, join
from service.protocol.parse import ProtocolError

__all__ = ["error_text", "illegal_text", "options_reason"]


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


# The engine's reasons for refusing a table's options (plain ValueError sentences, in English), as
# catalogue messages: a refusal is wholly in the player's language.  An unknown sentence falls back
# to ``options.other`` naming the option, never to the English text.
_OPTION_REASONS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"preset '(?P<preset>\w+)' is for (?P<low>\d+) to (?P<high>\d+) players, not (?P<n>\d+)"),
     "options.preset_players"),
    (re.compile(r"535 is played by (?P<low>\d+) to (?P<high>\d+) players, not (?P<n>\d+)"),
     "options.game_players"),
    (re.compile(r"option 'deal' 'clasico' is defined for (?P<low>\d+) to (?P<high>\d+) players, "
                r"not (?P<n>\d+)"), "options.deal_players"),
    (re.compile(r"option 'teams' needs 4 or 6 players, not (?P<n>\d+)"), "options.teams_players"),
    (re.compile(r"option 'cabron' cannot be combined with option 'teams'"), "options.cabron_teams"),
    (re.compile(r"option hand_size: (?P<n>\d+) players x (?P<size>\d+) cards do not fit .*"
                r"\(at most (?P<most>\d+) each\)"), "options.hand_size"),
    (re.compile(r"unknown (?:535 )?option\(s\):? (?P<option>[^;]+);"), "options.unknown"),
    (re.compile(r"turn=(?P<turn>.+)"), "options.turn"),
)
_OPTION_NAME = re.compile(r"option '?(?P<option>[a-z_]+)'?")


def options_reason(message: str) -> dict[str, Any]:
    """A deferred text item (:mod:`service.text`) for the engine's reason ``message`` for refusing a
    table's options, so that the refusal is rendered wholly in the reader's language."""
    for pattern, msgid in _OPTION_REASONS:
        m = pattern.search(message)
        if m:
            params: dict[str, Any] = {k: v.strip("' ") for k, v in m.groupdict().items()}
            if "preset" in params:  # a preset is named in words ("las reglas clásicas")
                params["preset"] = {"t": f"options.preset.{params['preset']}"}
            return {"t": msgid, "p": params}
    named = _OPTION_NAME.search(message)
    return {"t": "options.other", "p": {"option": named.group("option") if named else "?"}}
