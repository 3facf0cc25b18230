"""Weighting Cinquillo determinizations by how well they explain the others' public moves.

Every determinization drawn by :mod:`engine.ai.cinquillo_sample` is *possible*; not every one is
*likely*.  Players do not choose at random: a player who extends copas with the 6 usually holds
the 7, a player who keeps a suit closed usually holds few of its cards.  A search that treats all
possible deals alike misjudges the position, and measured against good players it chose worse
moves than the heuristic alone.  So each sampled deal gets a weight: the probability that players
playing like the medium player (a softmax of :func:`engine.ai.medium_cinquillo.score_card` with
inverse temperature :data:`BETA`) would have made the moves the history shows, from that deal's
hands.  Determinizations are then drawn in proportion to these weights (sampling-importance-
resampling).  Only the seat's own information is used: the public history and the sampled hands.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from engine.ai.infoset import CinquilloInfo, ReplayTable
from engine.ai.medium_cinquillo import score_card
from engine.cinquillo.cards import FULL, PASS
from engine.cinquillo.state import table_mask

#: inverse temperature of the modelled players' softmax over their cards' scores (how closely the
#: others are taken to follow the medium player's score; chosen in bench/results/cinquillo_experiments.txt)
BETA: Final = 4.0


def log_likelihood(info: CinquilloInfo, history: Sequence[tuple[int, int]], hands: Sequence[int],
                   cabron: bool, double_turn: bool, beta: float = BETA) -> float:
    """Log-probability of the other seats' choices in ``history`` if the deal were ``hands`` (now).

    The hands at the start of the round are the hands now plus the cards each seat has played;
    the round is replayed and, at every choice of another seat between two or more cards, the
    modelled probability of the card it played is added (in logs), the softmax's inverse
    temperature being ``beta``.
    """
    start = list(hands)
    for who, move in history:
        if move != PASS:
            start[who] |= 1 << move
    table = ReplayTable(cabron, double_turn)
    st = table.st
    total = 0.0
    for who, move in history:
        if move == PASS:
            continue
        hand = start[who]
        if who != info.seat:
            options = hand & table.playable()
            if options & (options - 1):  # two or more cards: a real choice
                unseen = FULL & ~table_mask(st) & ~hand
                scores = []
                m = options
                while m:
                    low = m & -m
                    c = low.bit_length() - 1
                    scores.append(beta * score_card(st, hand, unseen, c))
                    m ^= low
                top = max(scores)
                chosen = beta * score_card(st, hand, unseen, move)
                total += chosen - top - math.log(sum(math.exp(s - top) for s in scores))
        start[who] = hand & ~(1 << move)
        table.play(move)
    return total
