"""Cinquillo: the rules engine (RULES.md C-1..C-13), registered as the game ``"cinquillo"``.

``RULES`` is the registered :class:`~engine.cinquillo.game.CinquilloRules` (the fast path: int
moves, in-place ``apply``).  For bots: cards are ints 0..39 (``card("5o") == 4``, ``code(4) ==
"5o"``), ``PASS`` is 40, hands are bit masks (``mask_of``/``cards_of``/``codes_of``), the state class
is :class:`CinquilloState` (its docstring lists the fields) and :func:`replace_hands` gives a clone
hidden hands of your choice (determinization); :func:`unseen_by` is the set a seat cannot see.

Choices made where RULES.md is open (each also documented where it is implemented):

* Deals: see :mod:`engine.cinquillo.deal` (clasico: one card at a time from seat 0, no dealer; with
  3 players the 40th card goes to the holder of the 5 de oros, or to seat 0 when it *is* the 5 de
  oros).  An extra option ``deal`` ("clasico"/"tradicional") lets the deal be set on its own.
* The match's end: see :mod:`engine.cinquillo.options` (``points``/``cabron`` play to ``target``;
  ``rounds_to_win`` with them, ``target`` without them, or ``cabron`` with ``points=False`` is a
  ValueError).  Match winners are every seat with the top tally (a tie is a shared win).
* ``scores`` count points in a points match and round wins otherwise.
* Cabrón ties (C-13): the tied players share the cards left in the *other* players' hands, exactly
  (Fraction; JSON ``"13/2"``), and each of them is credited with a round win and its pot share.
* Teams (C-12): the pot is split between the two partners, the remainder stays in the pot; teams
  are allowed with either preset (4 or 6 players), cabrón with either preset.
* ``hands=``: each seat needs at least one card; card ints 0..39 are accepted as well as codes.
* Notation is read leniently (``" 5O "`` is ``5o``); ``legal_moves`` is always canonical.
"""

from engine.cinquillo.cards import (
    CODES,
    PASS,
    RANKS,
    SUIT_NAMES,
    SUITS,
    card,
    cards_of,
    code,
    codes_of,
    mask_of,
    rank_index,
    suit_of,
)
from engine.cinquillo.game import CinquilloRules
from engine.cinquillo.options import Options
from engine.cinquillo.state import (
    CinquilloState,
    cards_accounted,
    holder_of_five_oros,
    playable_mask,
    replace_hands,
    table_mask,
    team_of,
    teams_list,
    unseen_by,
)
from engine.rules import register

RULES = CinquilloRules()
register(RULES)

__all__ = [
    "CODES",
    "PASS",
    "RANKS",
    "RULES",
    "SUITS",
    "SUIT_NAMES",
    "CinquilloRules",
    "CinquilloState",
    "Options",
    "card",
    "cards_accounted",
    "cards_of",
    "code",
    "codes_of",
    "holder_of_five_oros",
    "mask_of",
    "playable_mask",
    "rank_index",
    "replace_hands",
    "suit_of",
    "table_mask",
    "team_of",
    "teams_list",
    "unseen_by",
]
