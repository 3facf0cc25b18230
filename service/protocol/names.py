"""The names chat commands are written with: each command's canonical English name and its
aliases (Spanish, and a few English synonyms), matched by :mod:`service.protocol.parse` after folding
accents and case, and listed for a platform that routes or shows some commands itself (Telegram's
command filters and "/" menu).  Pure."""

from __future__ import annotations

# Spanish aliases are matched after folding accents and case, so "/Estadísticas" works too.
COMMANDS: dict[str, str] = {
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
    "daily": "daily", "diario": "daily", "diaria": "daily", "reto": "daily",
}
# Spellings with accents, for a platform that matches command names itself (Telegram's filters):
# the parser folds accents away, so these are only ever listed by names_of.
_ACCENTED = {"estadisticas": "estadísticas", "puntuacion": "puntuación", "clasificacion": "clasificación"}

# The name a Spanish speaker is shown for each command that has Spanish aliases (a menu of commands,
# Telegram's "/"): one of its aliases, without accents (Telegram's command names are [a-z0-9_]).
_SPANISH_NAME = {"new": "nueva", "join": "unirme", "leave": "salir", "start": "empezar",
                 "cancel": "cancelar", "play": "jugar", "move": "mover", "hand": "mano", "rules": "reglas",
                 "stats": "estadisticas", "lang": "idioma", "replay": "repetir", "help": "ayuda",
                 "kick": "expulsar", "set": "opciones", "rating": "puntuacion", "top": "clasificacion",
                 "tournament": "torneo", "daily": "diario"}


def shown_name(command: str, locale: str) -> str:
    """The name a command is shown with to a reader of ``locale`` (``mano`` for ``hand`` in Spanish)."""
    return _SPANISH_NAME.get(command, command) if locale == "es" else command


def names_of(command: str) -> tuple[str, ...]:
    """Every name a chat command is written with (its canonical name first, then its aliases, with
    and without accents): for a platform that routes some commands before the service parses them."""
    names = [command, *(a for a, c in COMMANDS.items() if c == command and a != command)]
    return tuple(names + [_ACCENTED[n] for n in names if n in _ACCENTED])
