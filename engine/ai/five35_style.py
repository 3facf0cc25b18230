"""Which way each other 535 player plays, read from this round's public moves.

The hard player's playouts need a model of every seat's later moves, and no one model fits all
opponents: modelling three medium players as the tuned policy (:data:`five35_playout.HARD`, which
passes little and leads singles) cost 20 points against them, and modelling three searching
players as medium cost 15 against those (``bench/results/five35_experiments.txt``).  The two
kinds of player differ most in how they lead and how they follow (bench/five35_styles.py,
four-player rounds of self-play, plain PIMC at 100 ms): the medium player leads its biggest set
(294 of 385 leads put down more than one card) and adds to the pile (242 of 599 follow plays),
a searching player mostly leads single cards (89 of 218) and overwrites (64 of 326 follows add).
Each lead so moves the odds that a seat plays like a searcher rather than like the medium player
by a fixed likelihood ratio (passes tell the two apart too little, 52% against 59% of follows,
and the adds, used too, made medium players read as searchers too early).  Each playout then
models each seat with the tuned policy with the probability the odds give (:func:`draw`), else
as the medium player.

The moves are classified by replaying the public history on the pile alone (passes, the pile's
effect table, F-8..F-10): no hand is read (G-1).
"""

from __future__ import annotations

import math
from typing import Final

from engine.ai.five35_playout import HARD, MEDIUM, Weights
from engine.five35.piles import ADD, MOVES, NCARDS, NMOVES, PASS
from engine.five35.state import State

#: the share of leads that put down more than one card, and of follow plays that add to the pile
#: (not overwrite it), for the medium player and for a searching player (see the module docstring)
MULTI_MEDIUM: Final = 0.76
MULTI_SEARCHER: Final = 0.41
ADD_MEDIUM: Final = 0.40
ADD_SEARCHER: Final = 0.20
#: log-likelihood ratios (searcher over medium) of one observation of each kind
SINGLE_LLR: Final = math.log((1 - MULTI_SEARCHER) / (1 - MULTI_MEDIUM))
MULTI_LLR: Final = math.log(MULTI_SEARCHER / MULTI_MEDIUM)
ADD_LLR: Final = math.log(ADD_SEARCHER / ADD_MEDIUM)
OVERWRITE_LLR: Final = math.log((1 - ADD_SEARCHER) / (1 - ADD_MEDIUM))
#: the log odds before any move is seen (0: either model in half the playouts; not Final, so that
#: bench/tournament.py can vary it)
PRIOR = 0.0


def counts(st: State) -> list[tuple[int, int, int, int]]:
    """Per seat, this round's single-card leads, bigger leads, adds and overwrites."""
    out = [[0, 0, 0, 0] for _ in range(st.players)]
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
            out[seat][NCARDS[move] > 1] += 1
        else:
            out[seat][2 if MOVES[move][0] == ADD else 3] += 1
        new = effect[pile * NMOVES + move]
        if new < 0:  # F-9 size limit or F-10 Rule of 8: a new trick
            pile, in_trick = 0, st.players
        else:
            pile = new
    return [(a, b, c, d) for a, b, c, d in out]


def searcher_log_odds(single: int, multi: int) -> float:
    """The log odds that a seat with these leads plays like a searcher rather than like medium
    (the follows' adds are counted but not used: with them, medium players read as searchers too
    early, and hard won 12 points less against them, bench/results/five35_experiments.txt)."""
    return PRIOR + single * SINGLE_LLR + multi * MULTI_LLR


def searcher_probabilities(st: State, seat: int) -> tuple[float, ...]:
    """Per seat, the probability that it plays like a searcher (1.0 for ``seat`` itself: the hard
    player models its own later moves with the tuned policy)."""
    out: list[float] = []
    for s, c in enumerate(counts(st)):
        out.append(1.0 if s == seat else 1.0 / (1.0 + math.exp(-searcher_log_odds(c[0], c[1]))))
    return tuple(out)


def draw(seed: int, probabilities: tuple[float, ...]) -> tuple[Weights, ...]:
    """Every seat's playout policy for one playout: the tuned policy with the seat's probability,
    else the medium player's, drawn from ``seed`` (the same seed, the same draw: the search plays
    all its moves out from one deal with one seed, so they are compared under the same models)."""
    out: list[Weights] = []
    for s, p in enumerate(probabilities):
        x = ((seed ^ (s * 0x9E3779B9)) * 0x85EBCA6B) & 0xFFFFFFFF
        x ^= x >> 13
        x = (x * 0xC2B2AE35) & 0xFFFFFFFF
        x ^= x >> 16
        out.append(HARD if x < p * 4294967296.0 else MEDIUM)
    return tuple(out)


def seat_weights(st: State, seat: int, own: Weights = HARD) -> tuple[Weights, ...]:
    """The playout policy of every seat, for the player at ``seat``: ``own`` for itself, and for
    each other seat the tuned policy or the medium player's, whichever its moves make likelier."""
    out: list[Weights] = []
    for s, c in enumerate(counts(st)):
        if s == seat:
            out.append(own)
        else:
            out.append(MEDIUM if searcher_log_odds(c[0], c[1]) < 0 else HARD)
    return tuple(out)
