"""Table options as people write them (``players=3``, ``chips``, ``tradicional``, ``objetivo=30``...),
in English and Spanish, to the engine's option names and values (docs/rules.md).  Syntax only: which
options a game accepts is the engine's to say.  Pure."""

from __future__ import annotations

import re
from typing import Any

from service.protocol.errors import ProtocolError
from service.protocol.moves import fold

# Option words: presets, and the Cinquillo variants in English and Spanish (docs/rules.md).
_PRESETS: dict[str, str] = {"clasico": "clasico", "tradicional": "tradicional"}
_FLAGS: dict[str, tuple[str, Any]] = {
    "chips": ("chips", True), "pago": ("chips", True), "fichas": ("chips", True),
    "points": ("points", True), "puntaje": ("points", True), "puntos": ("points", True),
    "double_turn": ("double_turn", True), "doble": ("double_turn", True),
    "doble_turno": ("double_turn", True),
    "teams": ("teams", True), "parejas": ("teams", True),
    "cabron": ("cabron", True),
    "clockwise": ("direction", "clockwise"), "horario": ("direction", "clockwise"),
    "counterclockwise": ("direction", "counterclockwise"),
    "antihorario": ("direction", "counterclockwise"),
}
# Spanish spellings of option keys and of string values, mapped to the engine's names.
_KEY_ALIASES = {"jugadores": "players", "preajuste": "preset", "direccion": "direction",
                "objetivo": "target", "doble_turno": "double_turn"}
_VALUE_ALIASES = {"horario": "clockwise", "antihorario": "counterclockwise"}
_TRUE = frozenset({"on", "yes", "true", "si"})
_FALSE = frozenset({"off", "no", "false"})

_KEY_RE = re.compile(r"[a-z][a-z0-9_]{0,31}")
_VALUE_RE = re.compile(r"[a-z0-9_.\-]{1,32}")
_INT_RE = re.compile(r"-?\d{1,9}", re.ASCII)


def option_value(raw: str) -> bool | int | str:
    folded = fold(raw)
    if folded in _TRUE:
        return True
    if folded in _FALSE:
        return False
    if _INT_RE.fullmatch(folded):
        return int(folded)
    if not _VALUE_RE.fullmatch(folded):
        raise ValueError(raw)
    return _VALUE_ALIASES.get(folded, _PRESETS.get(folded, folded))


def parse_options(command: str, words: list[str]) -> dict[str, Any]:
    """``options`` and ``players`` from option words (``players=3``, ``target=30``, ``chips``...)."""
    options: dict[str, Any] = {}
    players: int | None = None

    def put(key: str, value: Any, word: str) -> None:
        # A repeated option (or "clockwise counterclockwise") is ambiguous: refuse, don't guess.
        if key in options:
            raise ProtocolError("bad_option", command=command, option=word)
        options[key] = value

    for word in words:
        folded = fold(word)
        if "=" in folded:
            key, _, raw = folded.partition("=")
            key = _KEY_ALIASES.get(key, key)
            try:
                value = option_value(raw)
            except ValueError:
                raise ProtocolError("bad_option", command=command, option=word) from None
            if not _KEY_RE.fullmatch(key):
                raise ProtocolError("bad_option", command=command, option=word)
            if key == "players":
                if players is not None or isinstance(value, bool) or not isinstance(value, int):
                    raise ProtocolError("bad_option", command=command, option=word)
                players = value
            else:
                put(key, value, word)
        elif folded in _PRESETS:
            put("preset", _PRESETS[folded], word)
        elif folded in _FLAGS:
            put(*_FLAGS[folded], word)
        elif folded.isascii() and folded.isdigit() and len(folded) <= 2 and players is None:
            players = int(folded)  # "/play 535 4": a bare number is the number of seats
        else:
            raise ProtocolError("bad_option", command=command, option=word)
    return {"options": options, "players": players}
