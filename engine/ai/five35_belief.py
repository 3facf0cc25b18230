"""Weighting 535 determinizations by how well they explain the others' moves this round.

In 535 no move *proves* anything about a hand (passing is always allowed, F-8), so a uniform deal
of the unseen cards is the exact set of possible worlds; but players do not choose at random.  A
player who passed on a single 9 while holding a lone Rey would usually have played it; one who
led a pair of 3s probably holds no triple.  Each sampled deal gets the probability that players
choosing like the medium player would have made the moves this round's history shows, from that
deal's hands: a softmax (inverse temperature ``beta``) of the medium score
(:func:`engine.ai.five35_playout.choose` scores the same way) over the legal plays, pass scored
:data:`PASS_SCORE` (the medium player passes when every play scores below it).  Determinizations
are then drawn in proportion to these weights (sampling-importance-resampling), tempered so that
a few deals cannot take all the mass (:mod:`engine.ai.belief_weights`).

Only the seat's own information is used: the public history and the sampled hands (G-1).
"""

from __future__ import annotations

import math

from engine.ai import medium_five35
from engine.ai.five35_playout import Row
from engine.five35.cards import GUARD, size
from engine.five35.piles import REQ
from engine.five35.state import State
from engine.rules import rules_for

#: inverse temperature of the modelled players' softmax over the medium scores
BETA = 2.0
#: the score of a pass when following (the medium player passes when no play scores above 0)
PASS_SCORE = 0.0
#: the score of a pass when another seat is about to go out (the medium player then plays on)
DANGER_PASS_SCORE = -2.0
#: scores are capped here: going out (the medium player's 1e6) is simply very likely
CAP = 8.0

_RULES = rules_for("535")


def _log_prob(st: State, rows: list[list[Row]], move: int, beta: float) -> float:
    """Log-probability that the seat to move in ``st`` plays ``move`` under the modelled policy."""
    seat = st.to_move
    hand = st.hands[seat] | GUARD
    n_hand = st.counts[seat]
    danger = False
    for i, c in enumerate(st.counts):
        if c <= medium_five35.DANGER and i != seat:
            danger = True
    scores: list[float] = []
    chosen = -1e9
    if st.pile:
        chosen = beta * (DANGER_PASS_SCORE if danger else PASS_SCORE)
        scores.append(chosen)
    for m, req, base, used, eight, n in rows[st.pile]:
        d = hand - req
        if d & GUARD != GUARD:
            continue
        if n == n_hand:
            score = CAP
        else:
            broken = d & used  # one break per rank left with copies, as in five35_playout.choose
            score = base - medium_five35.BREAK * ((broken + used) & GUARD).bit_count() if broken else base
            if eight:
                score += medium_five35.KEEP_EIGHT if danger or n_hand - n <= 3 else -medium_five35.KEEP_EIGHT
        sc = beta * score
        scores.append(sc)
        if m == move:
            chosen = sc
    if len(scores) < 2:
        return 0.0  # no choice
    top = max(scores)
    total = 0.0
    for sc in scores:
        total += math.exp(sc - top)
    return chosen - top - math.log(total)


def log_likelihood(base: State, seat: int, hands: list[int], rows: list[list[Row]],
                   beta: float = BETA) -> float:
    """Log-probability of the other seats' moves in ``base``'s round history if the hands now were
    ``hands`` (packed, one per seat): the round is replayed from its deal (the hands now plus the
    cards each seat has played) on a copy of ``base``."""
    start = hands[:]
    for entry in base.history:
        start[entry & 7] += REQ[entry >> 3]
    st = base.clone()
    st.hands = start
    st.counts = [size(h) for h in start]
    st.history = []
    st.pile = 0
    st.passed = 0
    st.in_trick = st.players
    st.leader = st.to_move = (st.dealer + 1) % st.players  # F-13: who led the round
    st.last = -1
    st.trick_start = 0
    apply = _RULES.apply
    total = 0.0
    for entry in base.history:
        who, move = entry & 7, entry >> 3
        if who != seat and st.to_move == who:
            total += _log_prob(st, rows, move, beta)
        apply(st, move)
    return total


__all__ = ["BETA", "log_likelihood"]
