"""The chat command protocol (docs/design.md), parsed once here for every chat adapter.

``parse_command("/move 5 O")`` gives ``Command("move", {"move": "5o"})``; bad input raises
:class:`ProtocolError` with a stable ``code`` (translated by ``service.protocol.i18n`` as ``error.<code>``)
and the ``params`` its message mentions.  The commands and their ``args``:

- ``new``, ``play``: ``game`` ("cinquillo" or "535"), ``options`` (a dict for ``engine.new_game``),
  ``players`` (int or None: ``players=3`` or a bare ``3``).  ``/nueva cinquillo tradicional chips``;
  ``play`` also ``level``, the AI players' (``/play 535 hard``, ``/jugar cinquillo nivel=difícil``).
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
- ``daily``: ``game`` (or None: Cinquillo) and ``what``: None (play today's deal, or once played
  the standing; in a group: the group's board), ``"week"``, ``"board"`` or ``"share"`` (in a group:
  post one's share text there).  ``/diario 535 semana``
- ``rules``: ``game`` (or ``"ratings"``: how ratings work) or None.  ``lang``: ``locale`` ("es" or
  "en").  ``replay``: ``table``.

The parser checks syntax only: whether an option exists, a move is legal or a table exists is for
the engine and the service to say.  It is pure (no IO) and total: on any text it returns a
:class:`Command` or raises :class:`ProtocolError`, never anything else.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from service.protocol import chats
from service.protocol.errors import ProtocolError
from service.protocol.moves import fold, normalise_move
from service.protocol.names import COMMANDS as _COMMANDS
from service.protocol.options import parse_options

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



_TABLE_RE = re.compile(r"[A-Za-z0-9_-]{1,64}")
_BOT_RE = re.compile(r"[A-Za-z0-9_]{1,64}")


def parse_command(text: str, *, bot: str | None = None, chat: str | None = None) -> Command:
    """Parse one chat message into a :class:`Command`; raise :class:`ProtocolError` if it is not one.

    ``bot`` is the adapter's own bot username (Telegram): a command addressed to another bot in a
    group (``/join@OtherBot``) raises ``other_bot``, which the adapter should ignore silently.
    Without ``bot`` any ``@suffix`` is accepted and dropped.  ``chat``, the kind of chat the text
    was sent in (``private`` or ``group``): a command not for that kind (``service.protocol.chats``) raises
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
    if addressee and bot is not None and fold(addressee) != fold(bot):
        raise ProtocolError("other_bot", bot=addressee)
    name = _COMMANDS.get(fold(raw_name))
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
    game = _GAME_ALIASES.get(fold(word))
    if game is None:
        raise ProtocolError("unknown_game", command=command, game=word)
    return game


def _new(command: str, words: list[str]) -> dict[str, Any]:
    if not words:
        raise ProtocolError("missing_argument", command=command, name="game")
    game = _game(command, words[0])
    rest, level = words[1:], None
    if command == "play":
        # "/play 535 hard": the AI players' level, a word of its own (or level=, nivel=), once.
        for word in words[1:]:
            folded = fold(word)
            key, eq, value = folded.partition("=")
            named = eq and key in ("level", "nivel")
            found = _LEVEL_ALIASES.get(value if named else folded if not eq else "")
            if found is None and named:
                raise ProtocolError("bad_argument", command=command, name="level", value=word)
            if found is not None:
                if level is not None:
                    raise ProtocolError("bad_option", command=command, option=word)
                level = found
                rest = [w for w in rest if w is not word]
    out = {"game": game, **parse_options(command, rest)}
    if level is not None:
        out["level"] = level
    return out


def _set(command: str, words: list[str]) -> dict[str, Any]:
    # "/set players=3 chips": the options of an open lobby, written as for /new (without the game).
    if not words:
        raise ProtocolError("missing_argument", command=command, name="options")
    return parse_options(command, words)


def _kick(command: str, words: list[str]) -> dict[str, Any]:
    if not words:
        raise ProtocolError("missing_argument", command=command, name="seat")
    if len(words) > 1:
        raise ProtocolError("unexpected_argument", command=command, value=words[1])
    if not (words[0].isascii() and words[0].isdigit() and len(words[0]) <= 2):
        raise ProtocolError("bad_argument", command=command, name="seat", value=words[0])
    return {"seat": int(words[0])}


def _bots(command: str, words: list[str]) -> dict[str, Any]:
    if not words:
        raise ProtocolError("missing_argument", command=command, name="n")
    if len(words) > 2:
        raise ProtocolError("unexpected_argument", command=command, value=words[2])
    if not (words[0].isascii() and words[0].isdigit() and 1 <= int(words[0]) <= MAX_BOTS):
        raise ProtocolError("bad_argument", command=command, name="n", value=words[0])
    level = "medium"
    if len(words) == 2:
        found = _LEVEL_ALIASES.get(fold(words[1]))
        if found is None:
            raise ProtocolError("bad_argument", command=command, name="level", value=words[1])
        level = found
    return {"n": int(words[0]), "level": level}


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
    if words and fold(words[0]) in _RATING_TOPIC:
        return {"game": "ratings"}
    return {"game": _game(command, words[0]) if words else None}


_RATING_TOPIC = frozenset({"ratings", "rating", "puntuacion", "puntuaciones", "elo"})
_WINDOWS = {"week": "week", "semana": "week", "weekly": "week", "semanal": "week",
            "month": "month", "mes": "month", "monthly": "month", "mensual": "month"}
MAX_ROUNDS = 9
_TOURNAMENT_ACTIONS = {"join": "join", "unirse": "join", "unirme": "join", "leave": "leave", "salir": "leave",
                       "start": "start", "empezar": "start", "comenzar": "start",
                       "cancel": "cancel", "cancelar": "cancel"}


def _game_and(command: str, words: list[str], kinds: dict[str, str],
              name: str) -> tuple[str | None, str | None]:
    """A game and one word of ``kinds`` (each at most once, in any order): ``/top`` and ``/daily``'s
    arguments; any other word is refused as a bad ``name``."""
    game: str | None = None
    kind: str | None = None
    for word in words:
        folded = fold(word)
        if folded in kinds and kind is None:
            kind = kinds[folded]
        elif folded in _GAME_ALIASES and game is None:
            game = _GAME_ALIASES[folded]
        else:
            raise ProtocolError("bad_argument", command=command, name=name, value=word)
    return game, kind


def _top(command: str, words: list[str]) -> dict[str, Any]:
    # "/top", "/top 535", "/top week", "/top cinquillo mes": a game and a window, in any order.
    game, window = _game_and(command, words, _WINDOWS, "board")
    return {"game": game, "window": window}


def _tournament(command: str, words: list[str]) -> dict[str, Any]:
    if not words:
        raise ProtocolError("missing_argument", command=command, name="game")
    action = _TOURNAMENT_ACTIONS.get(fold(words[0]))
    if action is not None:
        if len(words) > 1:
            raise ProtocolError("unexpected_argument", command=command, value=words[1])
        return {"action": action}
    game = _game(command, words[0])
    rounds = 3
    rest = []
    for word in words[1:]:
        key, eq, raw = fold(word).partition("=")
        if eq and key in ("rounds", "rondas"):
            if not (raw.isascii() and raw.isdigit() and 1 <= int(raw) <= MAX_ROUNDS):
                raise ProtocolError("bad_option", command=command, option=word)
            rounds = int(raw)
        else:
            rest.append(word)
    return {"action": "open", "game": game, "rounds": rounds, **parse_options(command, rest)}


_DAILY_WHAT = {"week": "week", "semana": "week", "board": "board", "tabla": "board", "top": "board",
               "ranking": "board", "clasificacion": "board", "share": "share", "compartir": "share"}


def _daily(command: str, words: list[str]) -> dict[str, Any]:
    # "/daily", "/daily 535", "/daily week", "/diario cinquillo compartir": a game and a what, any order.
    game, what = _game_and(command, words, _DAILY_WHAT, "daily")
    return {"game": game, "what": what}


def _lang(command: str, words: list[str]) -> dict[str, Any]:
    if not words:
        raise ProtocolError("missing_argument", command=command, name="locale")
    if len(words) > 1:
        raise ProtocolError("unexpected_argument", command=command, value=words[1])
    folded = fold(words[0])
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
    "daily": _daily,
    **{name: _no_args for name in _NO_ARGS},
}
