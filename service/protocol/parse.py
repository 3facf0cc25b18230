"""The chat command protocol (docs/design.md), parsed once here for every chat adapter.

``parse_command("/move 5 O")`` gives ``Command("move", {"move": "5o"})``; bad input raises
:class:`ProtocolError` with a stable ``code`` (translated by ``service.protocol.i18n`` as ``error.<code>``)
and the ``params`` its message mentions.  The commands and their ``args``:

- ``new``, ``play``: ``game`` ("cinquillo" or "535"), ``options`` (a dict for ``engine.new_game``),
  ``players`` (int or None: ``players=3`` or a bare ``3``).  ``/nueva cinquillo tradicional chips``
- ``join``, ``leave``, ``cancel``, ``hand``, ``stats``, ``help``: no args.
- ``start``: ``payload`` (str or None: Telegram's deep link sends ``/start <payload>``).
- ``bots``: ``n`` (1..5), ``level`` ("easy", "medium" by default, "hard").  ``/bots 2 difícil``
- ``move``: ``move`` in the engine's canonical notation.  ``/move play 7 7``, ``/mover 5 oros``
- ``kick``: ``seat`` (the seat number, from 1).  ``/expulsar 3``
- ``set``: ``options`` and ``players`` as for ``new`` (an open lobby's options).  ``/opciones chips``
- ``rating``: no args.  ``top``: ``game`` and ``window`` ("week", "month"), each or None.
  ``/top 535 semana``
- ``tournament``: ``action`` ("open", "join", "leave", "start", "cancel"); to open ``game``,
  ``options``, ``players`` (seats per table) as for ``new``, and ``rounds`` (1..9, default 3).
  ``/torneo cinquillo rondas=3``, ``/tournament join``, ``/tournament start``
- ``rules``: ``game`` (or ``"ratings"``: how ratings work) or None.  ``lang``: ``locale`` ("es" or
  "en").  ``replay``: ``table``.

The parser checks syntax only: whether an option exists, a move is legal or a table exists is for
the engine and the service to say.  It is pure (no IO) and total: on any text it returns a
:class:`Command` or raises :class:`ProtocolError`, never anything else.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from service.domain import chats

MAX_LENGTH = 512
"""Longest text accepted, in characters: a command is short; anything longer is noise or abuse."""

GAMES = ("cinquillo", "535")
LEVELS = ("easy", "medium", "hard")
LOCALES = ("es", "en")
MAX_BOTS = 5

__all__ = ["GAMES", "LEVELS", "LOCALES", "MAX_LENGTH", "Command", "ProtocolError", "parse_command"]


@dataclass(frozen=True)
class Command:
    """A parsed chat command: its canonical English ``name`` and its typed ``args``."""

    name: str
    args: dict[str, Any] = field(default_factory=dict)


class ProtocolError(Exception):
    """Chat text that is not a valid command.

    ``code`` is stable (``not_a_command``, ``other_bot``, ``too_long``, ``unknown_command``,
    ``missing_argument``, ``unexpected_argument``, ``bad_argument``, ``unknown_game``,
    ``bad_option``, ``wrong_chat``); ``params`` are the values its message names (``command``,
    ``name``, ``value``, ``game``, ``option``, ``limit``, ``bot``, ``chat``).
    """

    def __init__(self, code: str, **params: Any) -> None:
        super().__init__(code, params)
        self.code = code
        self.params = params

    def __repr__(self) -> str:
        return f"ProtocolError({self.code!r}, **{self.params!r})"


# Spanish aliases are matched after folding accents and case, so "/Estadísticas" works too.
_COMMANDS: dict[str, str] = {
    "new": "new", "nueva": "new", "nuevo": "new",
    "join": "join", "unirse": "join", "unirme": "join",
    "leave": "leave", "salir": "leave",
    "bots": "bots",
    "start": "start", "empezar": "start", "comenzar": "start",
    "cancel": "cancel", "cancelar": "cancel",
    "play": "play", "jugar": "play",
    "move": "move", "mover": "move", "jugada": "move",
    "hand": "hand", "mano": "hand",
    "rules": "rules", "reglas": "rules",
    "stats": "stats", "estadisticas": "stats",
    "lang": "lang", "language": "lang", "idioma": "lang",
    "replay": "replay", "repetir": "replay",
    "help": "help", "ayuda": "help",
    "kick": "kick", "expulsar": "kick",
    "set": "set", "options": "set", "opciones": "set",
    "rating": "rating", "puntuacion": "rating", "elo": "rating",
    "top": "top", "ranking": "top", "clasificacion": "top",
    "tournament": "tournament", "torneo": "tournament",
}
_NO_ARGS = frozenset({"join", "leave", "cancel", "hand", "stats", "help", "rating"})

_GAME_ALIASES: dict[str, str] = {
    "cinquillo": "cinquillo", "cinq": "cinquillo",
    "535": "535", "5-3-5": "535", "cinco-tres-cinco": "535", "cincotrescinco": "535",
    "five35": "535", "five-three-five": "535",
}
_LEVEL_ALIASES: dict[str, str] = {
    "easy": "easy", "facil": "easy",
    "medium": "medium", "medio": "medium", "normal": "medium",
    "hard": "hard", "dificil": "hard",
}
_LOCALE_ALIASES: dict[str, str] = {
    "es": "es", "espanol": "es", "castellano": "es", "spanish": "es",
    "en": "en", "ingles": "en", "english": "en",
}

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
_TABLE_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_BOT_RE = re.compile(r"[A-Za-z0-9_]{1,64}")

# Moves.  Cinquillo: a card, the rank (number or name) then the suit (letter or name).
_RANK_WORDS = {"as": 1, "ace": 1, "sota": 10, "jack": 10, "caballo": 11, "knight": 11,
               "rey": 12, "king": 12}
_SUIT_WORDS = {"o": "o", "oro": "o", "oros": "o", "coins": "o", "coin": "o",
               "c": "c", "copa": "c", "copas": "c", "cups": "c", "cup": "c",
               "e": "e", "espada": "e", "espadas": "e", "swords": "e", "sword": "e",
               "b": "b", "basto": "b", "bastos": "b", "clubs": "b", "club": "b"}
_CARD_RE = re.compile(r"(\d{1,2}|[a-z]+) ?(?:(?:de|of) )?([a-z]+)", re.ASCII)
_PASS_WORDS = frozenset({"pass", "paso", "pasar", "pasa", "pasa turno"})
# 535: "play <ranks>", "add <ranks>"; a bare list of ranks is a play.
_VERBS = {"play": "play", "juega": "play", "jugar": "play", "juego": "play",
          "add": "add", "anade": "add", "anadir": "add", "agrega": "add", "agregar": "add",
          "suma": "add", "sumar": "add"}
_RANKS_RE = re.compile(r"\d{1,2}( \d{1,2})*", re.ASCII)


def _fold(text: str) -> str:
    """Lower case without accents ("Difícil" -> "dificil"), the form aliases are matched in.

    Only combining marks are dropped, so "ñ" becomes "n" as well ("añadir" -> "anadir").
    """
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def parse_command(text: str, *, bot: str | None = None, chat: str | None = None) -> Command:
    """Parse one chat message into a :class:`Command`; raise :class:`ProtocolError` if it is not one.

    ``bot`` is the adapter's own bot username (Telegram): a command addressed to another bot in a
    group (``/join@OtherBot``) raises ``other_bot``, which the adapter should ignore silently.
    Without ``bot`` any ``@suffix`` is accepted and dropped.  ``chat``, the kind of chat the text
    was sent in (``private`` or ``group``): a command not for that kind (``service.domain.chats``) raises
    ``wrong_chat`` with ``command`` its canonical name; without ``chat`` the kind is not checked.
    """
    if not isinstance(text, str):
        raise ProtocolError("not_a_command")
    stripped = text.strip()
    # Plain chat is checked before the length so that a long ordinary message in a group is
    # ignored (not_a_command) rather than answered with a complaint about its length.
    if not stripped.startswith("/"):
        raise ProtocolError("not_a_command")
    if len(stripped) > MAX_LENGTH:
        raise ProtocolError("too_long", limit=MAX_LENGTH)
    head, *words = stripped.split()
    raw_name, _, addressee = head[1:].partition("@")
    if addressee and not _BOT_RE.fullmatch(addressee):
        raise ProtocolError("unknown_command", command=head[1:])
    if addressee and bot is not None and _fold(addressee) != _fold(bot):
        raise ProtocolError("other_bot", bot=addressee)
    name = _COMMANDS.get(_fold(raw_name))
    if name is None:
        raise ProtocolError("unknown_command", command=raw_name)
    if chat is not None and not chats.allowed(name, chat):
        raise ProtocolError("wrong_chat", command=name, chat=chat)
    return Command(name, _PARSERS[name](name, words))


def _no_args(command: str, words: list[str]) -> dict[str, Any]:
    if words:
        raise ProtocolError("unexpected_argument", command=command, value=words[0])
    return {}


def _start(command: str, words: list[str]) -> dict[str, Any]:
    # Telegram opens a private chat with "/start <payload>" from a t.me/<bot>?start=<payload> link.
    if len(words) > 1:
        raise ProtocolError("unexpected_argument", command=command, value=words[1])
    if words and not _TABLE_RE.fullmatch(words[0]):
        raise ProtocolError("bad_argument", command=command, name="payload", value=words[0])
    return {"payload": words[0] if words else None}


def _game(command: str, word: str) -> str:
    game = _GAME_ALIASES.get(_fold(word))
    if game is None:
        raise ProtocolError("unknown_game", command=command, game=word)
    return game


def _option_value(raw: str) -> bool | int | str:
    folded = _fold(raw)
    if folded in _TRUE:
        return True
    if folded in _FALSE:
        return False
    if _INT_RE.fullmatch(folded):
        return int(folded)
    if not _VALUE_RE.fullmatch(folded):
        raise ValueError(raw)
    return _VALUE_ALIASES.get(folded, _PRESETS.get(folded, folded))


def _new(command: str, words: list[str]) -> dict[str, Any]:
    if not words:
        raise ProtocolError("missing_argument", command=command, name="game")
    game = _game(command, words[0])
    return {"game": game, **_options(command, words[1:])}


def _set(command: str, words: list[str]) -> dict[str, Any]:
    # "/set players=3 chips": the options of an open lobby, written as for /new (without the game).
    if not words:
        raise ProtocolError("missing_argument", command=command, name="options")
    return _options(command, words)


def _kick(command: str, words: list[str]) -> dict[str, Any]:
    if not words:
        raise ProtocolError("missing_argument", command=command, name="seat")
    if len(words) > 1:
        raise ProtocolError("unexpected_argument", command=command, value=words[1])
    if not (words[0].isascii() and words[0].isdigit() and len(words[0]) <= 2):
        raise ProtocolError("bad_argument", command=command, name="seat", value=words[0])
    return {"seat": int(words[0])}


def _options(command: str, words: list[str]) -> dict[str, Any]:
    """``options`` and ``players`` from option words (``players=3``, ``target=30``, ``chips``...)."""
    options: dict[str, Any] = {}
    players: int | None = None

    def put(key: str, value: Any, word: str) -> None:
        # A repeated option (or "clockwise counterclockwise") is ambiguous: refuse, don't guess.
        if key in options:
            raise ProtocolError("bad_option", command=command, option=word)
        options[key] = value

    for word in words:
        folded = _fold(word)
        if "=" in folded:
            key, _, raw = folded.partition("=")
            key = _KEY_ALIASES.get(key, key)
            try:
                value = _option_value(raw)
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


def _bots(command: str, words: list[str]) -> dict[str, Any]:
    if not words:
        raise ProtocolError("missing_argument", command=command, name="n")
    if len(words) > 2:
        raise ProtocolError("unexpected_argument", command=command, value=words[2])
    if not (words[0].isascii() and words[0].isdigit() and 1 <= int(words[0]) <= MAX_BOTS):
        raise ProtocolError("bad_argument", command=command, name="n", value=words[0])
    level = "medium"
    if len(words) == 2:
        found = _LEVEL_ALIASES.get(_fold(words[1]))
        if found is None:
            raise ProtocolError("bad_argument", command=command, name="level", value=words[1])
        level = found
    return {"n": int(words[0]), "level": level}


def normalise_move(text: str) -> str | None:
    """The canonical notation of a typed move, or None when it has the shape of no move.

    Cinquillo: ``"5 O"``, ``"sota de copas"``, ``"12 bastos"`` -> ``"5o"``, ``"10c"``, ``"12b"``.
    535: ``"PLAY 7  7"``, ``"juega 9,7"``, ``"7 9"`` -> ``"play 7 7"``, ``"play 7 9"``;
    ``"añade 7 2"`` -> ``"add 2 7"``.  ``"paso"``/``"pasar"`` -> ``"pass"`` in both games.  Which
    ranks and cards exist, and whether the move is legal, is the engine's to say.
    """
    folded = " ".join(_fold(text).replace(",", " ").split())
    if folded in _PASS_WORDS:
        return "pass"
    verb, _, rest = folded.partition(" ")
    if verb in _VERBS and _RANKS_RE.fullmatch(rest):
        ranks = sorted(int(r) for r in rest.split())
        return f"{_VERBS[verb]} {' '.join(map(str, ranks))}"
    if _RANKS_RE.fullmatch(folded):
        ranks = sorted(int(r) for r in folded.split())
        return f"play {' '.join(map(str, ranks))}"
    card = _CARD_RE.fullmatch(folded)
    if card:
        rank_word, suit_word = card.groups()
        rank = int(rank_word) if rank_word.isdigit() else _RANK_WORDS.get(rank_word)
        suit = _SUIT_WORDS.get(suit_word)
        if rank is not None and suit is not None:
            return f"{rank}{suit}"
    return None


def _move(command: str, words: list[str]) -> dict[str, Any]:
    if not words:
        raise ProtocolError("missing_argument", command=command, name="move")
    raw = " ".join(words)
    move = normalise_move(raw)
    if move is None:
        raise ProtocolError("bad_argument", command=command, name="move", value=raw)
    return {"move": move}


def _rules(command: str, words: list[str]) -> dict[str, Any]:
    if len(words) > 1:
        raise ProtocolError("unexpected_argument", command=command, value=words[1])
    if words and _fold(words[0]) in _RATING_TOPIC:
        return {"game": "ratings"}
    return {"game": _game(command, words[0]) if words else None}


_RATING_TOPIC = frozenset({"ratings", "rating", "puntuacion", "puntuaciones", "elo"})
_WINDOWS = {"week": "week", "semana": "week", "weekly": "week", "semanal": "week",
            "month": "month", "mes": "month", "monthly": "month", "mensual": "month"}
MAX_ROUNDS = 9
_TOURNAMENT_ACTIONS = {"join": "join", "unirse": "join", "unirme": "join", "leave": "leave", "salir": "leave",
                       "start": "start", "empezar": "start", "comenzar": "start",
                       "cancel": "cancel", "cancelar": "cancel"}


def _top(command: str, words: list[str]) -> dict[str, Any]:
    # "/top", "/top 535", "/top week", "/top cinquillo mes": a game and a window, in any order.
    game: str | None = None
    window: str | None = None
    for word in words:
        folded = _fold(word)
        if folded in _WINDOWS and window is None:
            window = _WINDOWS[folded]
        elif folded in _GAME_ALIASES and game is None:
            game = _GAME_ALIASES[folded]
        else:
            raise ProtocolError("bad_argument", command=command, name="board", value=word)
    return {"game": game, "window": window}


def _tournament(command: str, words: list[str]) -> dict[str, Any]:
    if not words:
        raise ProtocolError("missing_argument", command=command, name="game")
    action = _TOURNAMENT_ACTIONS.get(_fold(words[0]))
    if action is not None:
        if len(words) > 1:
            raise ProtocolError("unexpected_argument", command=command, value=words[1])
        return {"action": action}
    game = _game(command, words[0])
    rounds = 3
    rest = []
    for word in words[1:]:
        key, eq, raw = _fold(word).partition("=")
        if eq and key in ("rounds", "rondas"):
            if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= MAX_ROUNDS):
                raise ProtocolError("bad_option", command=command, option=word)
            rounds = int(raw)
        else:
            rest.append(word)
    return {"action": "open", "game": game, "rounds": rounds, **_options(command, rest)}


def _lang(command: str, words: list[str]) -> dict[str, Any]:
    if not words:
        raise ProtocolError("missing_argument", command=command, name="locale")
    if len(words) > 1:
        raise ProtocolError("unexpected_argument", command=command, value=words[1])
    folded = _fold(words[0])
    # "es-ES", "en_GB": the language part decides.
    locale = _LOCALE_ALIASES.get(folded) or _LOCALE_ALIASES.get(re.split(r"[-_]", folded)[0])
    if locale is None:
        raise ProtocolError("bad_argument", command=command, name="locale", value=words[0])
    return {"locale": locale}


def _replay(command: str, words: list[str]) -> dict[str, Any]:
    if not words:
        raise ProtocolError("missing_argument", command=command, name="table")
    if len(words) > 1:
        raise ProtocolError("unexpected_argument", command=command, value=words[1])
    if not _TABLE_RE.fullmatch(words[0]):
        raise ProtocolError("bad_argument", command=command, name="table", value=words[0])
    return {"table": words[0]}


_PARSERS = {
    "new": _new, "play": _new, "bots": _bots, "move": _move, "rules": _rules, "lang": _lang,
    "replay": _replay, "start": _start, "kick": _kick, "set": _set, "top": _top, "tournament": _tournament,
    **{name: _no_args for name in _NO_ARGS},
}
