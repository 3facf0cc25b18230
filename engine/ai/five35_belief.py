"""Weighting 535 determinizations by how well they explain the other seats' moves this round.

A fair determinization (:mod:`engine.ai.five35_sample`) gives every split of the unseen cards the
same chance, yet the others' moves say more than their hand sizes: a seat that led a single 5
seldom held a second 5 (leading the pair sheds more), a seat that passed over a low single seldom
held a cheap single to beat it.  A search over fair deals ignores that; a plain PIMC does.  So each
deal the hard player plays out gets a weight: the probability that the seats, playing as the
hard player models them (their playout policies, :mod:`engine.ai.five35_style`), would have made
the moves the history shows from that deal's hands, each decision a softmax of the policy's
scores at inverse temperature ``beta`` (a pass scores the policy's pass threshold, less when a
seat is about to go out and the policy would follow).  The search then takes each move's mean
over the deals by those weights, tempered so that a few deals cannot take over
(:mod:`engine.ai.belief_weights`).

Only the seat's own information is used: its hand, the public history and the deal's hidden hands,
wound back to the round's start (G-1).
"""

from __future__ import annotations

import math
from typing import Final

from engine.ai.five35_playout import Weights, move_scores
from engine.five35.game import Five35Rules
from engine.five35.piles import NCARDS, PASS, REQ
from engine.five35.state import State

#: how far below its threshold a pass scores when another seat is about to go out (the policy
#: never passes then; a person or another program sometimes does)
PASS_IN_DANGER: Final = 2.0

_RULES: Final = Five35Rules()


def round_start(st: State) -> State:
    """A copy of ``st`` wound back to its round's first move: each seat's hand then (the hand now
    plus what it played), nothing played, the first trick not yet led."""
    s = st.clone()
    for h in st.history:
        m = h >> 3
        if m != PASS:
            s.hands[h & 7] += REQ[m]
            s.counts[h & 7] += NCARDS[m]
    s.played = 0
    s.pile = 0
    s.passed = 0
    s.in_trick = s.players
    s.last = -1
    s.leader = s.to_move = (st.history[0] & 7) if st.history else st.to_move
    s.history = []
    s.trick_start = 0
    return s


def log_prob(st: State, move: int, w: Weights, beta: float) -> float:
    """The log-probability that a seat playing the policy of weights ``w`` as a softmax at inverse
    temperature ``beta`` makes ``move`` in ``st`` (0 when it had no real choice)."""
    scores = move_scores(st, w)
    if not scores:
        return 0.0
    seat = st.to_move
    size = st.counts[seat]
    for m in scores:
        if NCARDS[m] == size:  # going out: the only move anyone makes (F-12)
            return 0.0
    options = [beta * s for s in scores.values()]
    if move == PASS:
        chosen = 0.0
    else:
        chosen = beta * scores.get(move, 0.0)
    if st.pile:
        danger = False
        for i, c in enumerate(st.counts):
            if i != seat and c <= w.danger:
                danger = True
        pass_score = beta * (w.pass_t - PASS_IN_DANGER if danger else w.pass_t)
        options.append(pass_score)
        if move == PASS:
            chosen = pass_score
    if len(options) < 2:
        return 0.0
    top = max(options)
    total = 0.0
    for x in options:
        total += math.exp(x - top)
    return chosen - top - math.log(total)


def log_likelihood(st: State, seat: int, models: tuple[Weights, ...], beta: float) -> float:
    """The log-probability of the other seats' moves this round if the hands were ``st``'s (a
    determinization), each seat ``i`` modelled as the policy ``models[i]`` (see the module
    docstring); ``seat`` is the searching player's own (its moves are not weighed)."""
    s = round_start(st)
    total = 0.0
    for h in st.history:
        who = h & 7
        move = h >> 3
        if who != seat:
            total += log_prob(s, move, models[who], beta)
        _RULES.apply(s, move)
    return total
