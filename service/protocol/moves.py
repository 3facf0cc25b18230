"""Typed moves in the engine's canonical notation, from what people write in either language
(``"sota de copas"`` -> ``"10c"``, ``"juega 9,7"`` -> ``"play 7 9"``); and :func:`fold`, the form
every alias of the protocol is matched in.  Pure."""

from __future__ import annotations

import re
import unicodedata

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


def fold(text: str) -> str:
    """Lower case without accents ("Difícil" -> "dificil"), the form aliases are matched in.

    Only combining marks are dropped, so "ñ" becomes "n" as well ("añadir" -> "anadir").
    """
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def normalise_move(text: str) -> str | None:
    """The canonical notation of a typed move, or None when it has the shape of no move.

    Cinquillo: ``"5 O"``, ``"sota de copas"``, ``"12 bastos"`` -> ``"5o"``, ``"10c"``, ``"12b"``.
    535: ``"PLAY 7  7"``, ``"juega 9,7"``, ``"7 9"`` -> ``"play 7 7"``, ``"play 7 9"``;
    ``"añade 7 2"`` -> ``"add 2 7"``.  ``"paso"``/``"pasar"`` -> ``"pass"`` in both games.  Which
    ranks and cards exist, and whether the move is legal, is the engine's to say.
    """
    folded = " ".join(fold(text).replace(",", " ").split())
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
