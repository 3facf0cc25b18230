"""The medium 535 player: one look at each legal move, scored the way good players think.

* Shed low singles early: every card put down counts, low ranks first (they rarely win a trick
  later, and high cards are what take the lead back).
* Keep 8s to take the lead back: an 8 ends the trick (F-10) and gives the lead, so it is spent
  only near the end of the hand or to stop a seat that is about to go out.
* Do not break groups: a move that uses some but not all copies of a rank wastes a group that
  could have been put down whole later.
* When following, pass rather than spend a move that scores below zero (a costly break or 8).

It reads only the seat's own hand, the public pile and the public hand sizes (G-1).
"""

from __future__ import annotations

import random
from typing import Final

from engine.five35.cards import EIGHT, FIELD_BITS, FIELD_MASK
from engine.five35.piles import ADD, MOVES, NCARDS, PASS
from engine.five35.state import State

#: weights of the score (tuned by hand against the easy player; see bench/tournament.py)
PER_CARD: Final = 1.0
LOW_RANK: Final = 0.15
BREAK: Final = 2.5
KEEP_EIGHT: Final = 3.0
ADD_BONUS: Final = 0.5
DANGER: Final = 2  # a seat with this many cards or fewer is about to go out


def score_move(hand: int, hand_size: int, move: int, danger: bool) -> float:
    """How good ``move`` is for a hand (packed) of ``hand_size`` cards; ``danger``: another seat
    is about to go out."""
    n = NCARDS[move]
    if n == hand_size:
        return 1e6  # going out wins the round (F-12)
    kind, ranks = MOVES[move]
    score = PER_CARD * n - LOW_RANK * sum(ranks) / n
    if kind == ADD:
        score += ADD_BONUS
    breaks = 0
    seen = -1
    for r in ranks:
        if r == seen:
            continue
        seen = r
        held = (hand >> (FIELD_BITS * r)) & FIELD_MASK
        if held > ranks.count(r):
            breaks += 1
    if breaks:
        score -= BREAK * breaks  # one subtraction: the fast playout policy computes it the same way
    if EIGHT in ranks:
        if danger or hand_size - n <= 3:
            score += KEEP_EIGHT  # now is the time to take the lead back
        else:
            score -= KEEP_EIGHT
    return score


def choose(st: State, legal: list[int], rng: random.Random) -> int:
    """The medium player's move among ``legal`` for the seat to move (ties broken by ``rng``)."""
    if len(legal) == 1:
        return legal[0]
    seat = st.to_move
    hand = st.hands[seat]
    size = st.counts[seat]
    danger = any(c <= DANGER for i, c in enumerate(st.counts) if i != seat)
    best, best_key, best_score = PASS, float("-inf"), float("-inf")
    for m in legal:
        if m == PASS:
            continue
        sc = score_move(hand, size, m, danger)
        key = sc + rng.random() * 1e-3  # the jitter only breaks ties; the pass rule reads the score
        if key > best_key:
            best, best_key, best_score = m, key, sc
    if st.pile and best_score < 0 and not danger:
        return PASS
    return best
