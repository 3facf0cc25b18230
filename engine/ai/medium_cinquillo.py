"""The medium Cinquillo player: one look at each legal card, scored the way good players think.

* Keep the cards that others need: a card at the edge of a suit holds back every card beyond it;
  play it when the cards beyond are mostly yours, keep it when they are mostly the others'.
* Open the suits where you hold the long run: a 5 is worth the cards of that suit you hold, less
  the cards of that suit it releases to the others.
* Play the 5s and the ends that free your own cards: a card whose neighbour beyond it is in your
  hand scores high, since your next turn is then safe.
* Cabrón (C-13): never jump over your own cards (they would be blocked for the round); jumping
  over the others' cards is good.  Doble turno (C-11): a 1 or a Rey is a free extra turn.

It reads only the seat's own hand and the public table (G-1), through the engine state rebuilt
from the view, so it can also serve as a playout policy.
"""

from __future__ import annotations

import random
from typing import Final

from engine.cinquillo.cards import FULL, PASS, RANGE, SUIT_MASK
from engine.cinquillo.state import CinquilloState, table_mask

#: weights of the score (tuned by hand against the easy player; see bench/tournament.py)
FREES_OWN: Final = 3.0
OWN_BEYOND: Final = 1.0
OTHERS_BEYOND: Final = 0.6
OWN_BLOCKED: Final = 6.0
OTHERS_BLOCKED: Final = 0.8
EXTRA_TURN: Final = 1.5


def _between(s: int, a: int, b: int) -> int:
    """Cards of suit ``s`` with rank index ``a..b`` (empty when a > b)."""
    return RANGE[s * 100 + a * 10 + b] if a <= b else 0


def score_card(st: CinquilloState, hand: int, unseen: int, c: int) -> float:
    """How good playing card ``c`` is for the holder of ``hand`` (higher is better)."""
    s, r = divmod(c, 10)
    lo, hi = st.low[s], st.high[s]
    mine = hand & ~(1 << c)
    if lo < 0:  # opening the suit with its 5
        suit = SUIT_MASK[s] & ~(1 << c)
        frees = (mine >> (c - 1) & 1) + (mine >> (c + 1) & 1)
        return (FREES_OWN * frees + OWN_BEYOND * (mine & suit).bit_count()
                - OTHERS_BEYOND * (unseen & suit).bit_count())
    if r > hi:
        beyond = _between(s, r + 1, 9)
        jumped = _between(s, hi + 1, r - 1)
        frees = mine >> (c + 1) & 1 if r < 9 else 0
    else:
        beyond = _between(s, 0, r - 1)
        jumped = _between(s, r + 1, lo - 1)
        frees = mine >> (c - 1) & 1 if r > 0 else 0
    score = (FREES_OWN * frees + OWN_BEYOND * (mine & beyond).bit_count()
             - OTHERS_BEYOND * (unseen & beyond).bit_count())
    if jumped:  # only in cabrón
        score += OTHERS_BLOCKED * (unseen & jumped).bit_count() - OWN_BLOCKED * (mine & jumped).bit_count()
    if st.double_turn and r in (0, 9):
        score += EXTRA_TURN
    return score


def choose(st: CinquilloState, legal: list[int], rng: random.Random) -> int:
    """The medium player's move among ``legal`` for the seat to move (ties broken by ``rng``)."""
    if len(legal) == 1:
        return legal[0]
    hand = st.hands[st.turn]
    unseen = FULL & ~table_mask(st) & ~hand
    best, best_score = PASS, float("-inf")
    for c in legal:
        sc = score_card(st, hand, unseen, c) + rng.random() * 1e-3
        if sc > best_score:
            best, best_score = c, sc
    return best
