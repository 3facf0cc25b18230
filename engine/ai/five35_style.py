"""Which way each other 535 player plays, read from this round's public moves.

The hard player's playouts need a model of every seat's later moves, and no one model fits all
opponents: modelling three medium players as the tuned policy (:data:`five35_playout.HARD`, which
passes little and leads singles) cost 20 points against them, and modelling three searching
players as medium cost 15 against those (``bench/results/five35_experiments.txt``).  The two
kinds of player differ most in how they lead (bench/five35_styles.py, four-player rounds of
self-play, plain PIMC at 100 ms): the medium player leads its biggest set, always while its hand
is nearly full (100 of 101 such leads put down more than one card, 194 of 284 later), a
searching player mostly single cards (30 of 73 early leads bigger, 55 of 141 later).  Each lead
so moves the odds that a seat plays like a searcher rather than like the medium player by a
fixed likelihood ratio, and each seat is modelled with the likelier policy.  (Passes tell the
two apart too little, 52% against 59% of follows; adds, 40% against 20% of follow plays, made
medium players read as searchers too early and cost 12 points against them.)

The moves are classified by replaying the public history on the pile alone (passes, the pile's
effect table, F-8..F-10): no hand is read (G-1).
"""

from __future__ import annotations

import math
from typing import Final

from engine.ai.five35_playout import HARD, MEDIUM, Weights
from engine.five35.piles import NCARDS, NMOVES, PASS
from engine.five35.state import State

#: the share of leads that put down more than one card, for the medium player and for a searching
#: player, early (the leader holds all but at most :data:`EARLY` of its cards) and late (see the
#: module docstring); the medium player's early share is smoothed (it led 100 of 101 so)
MULTI_MEDIUM_EARLY: Final = 0.98
MULTI_SEARCHER_EARLY: Final = 0.41
MULTI_MEDIUM_LATE: Final = 0.68
MULTI_SEARCHER_LATE: Final = 0.39
EARLY: Final = 3
#: log-likelihood ratios (searcher over medium) of one lead of each kind
EARLY_SINGLE_LLR: Final = math.log((1 - MULTI_SEARCHER_EARLY) / (1 - MULTI_MEDIUM_EARLY))
EARLY_MULTI_LLR: Final = math.log(MULTI_SEARCHER_EARLY / MULTI_MEDIUM_EARLY)
LATE_SINGLE_LLR: Final = math.log((1 - MULTI_SEARCHER_LATE) / (1 - MULTI_MEDIUM_LATE))
LATE_MULTI_LLR: Final = math.log(MULTI_SEARCHER_LATE / MULTI_MEDIUM_LATE)
#: the log odds before any lead is seen (below 0: a seat is modelled as the medium player until
#: its leads say otherwise; not Final, so that bench/tournament.py can vary it)
PRIOR = -0.1


def counts(st: State) -> list[tuple[int, int, int, int]]:
    """Per seat, this round's leads: early single-card, early bigger, late single, late bigger."""
    out = [[0, 0, 0, 0] for _ in range(st.players)]
    held = list(st.counts)  # each seat's hand size, wound back to the round's start
    for h in st.history:
        held[h & 7] += NCARDS[h >> 3]
    start = list(held)
    effect = st.tables.effect
    pile, in_trick = 0, st.players
    for h in st.history:
        seat, move = h & 7, h >> 3
        if move == PASS:
            in_trick -= 1
            if in_trick == 1:  # F-9: all but one passed: a new trick
                pile, in_trick = 0, st.players
            continue
        if pile == 0:
            late = held[seat] < start[seat] - EARLY
            out[seat][2 * late + (NCARDS[move] > 1)] += 1
        held[seat] -= NCARDS[move]
        new = effect[pile * NMOVES + move]
        if new < 0:  # F-9 size limit or F-10 Rule of 8: a new trick
            pile, in_trick = 0, st.players
        else:
            pile = new
    return [(a, b, c, d) for a, b, c, d in out]


def searcher_log_odds(early_single: int, early_multi: int, late_single: int = 0,
                      late_multi: int = 0) -> float:
    """The log odds that a seat with these leads plays like a searcher rather than like medium."""
    return (PRIOR + early_single * EARLY_SINGLE_LLR + early_multi * EARLY_MULTI_LLR
            + late_single * LATE_SINGLE_LLR + late_multi * LATE_MULTI_LLR)


def seat_weights(st: State, seat: int, own: Weights = HARD) -> tuple[Weights, ...]:
    """The playout policy of every seat, for the player at ``seat``: ``own`` for itself, and for
    each other seat the tuned policy or the medium player's, whichever its leads make likelier
    (the likelier one, not a draw in proportion: drawing the tuned policy for half the playouts of
    an unread seat won 15 points less against medium players, five35_experiments.txt)."""
    out: list[Weights] = []
    for s, c in enumerate(counts(st)):
        if s == seat:
            out.append(own)
        else:
            out.append(MEDIUM if searcher_log_odds(*c) < 0 else HARD)
    return tuple(out)
