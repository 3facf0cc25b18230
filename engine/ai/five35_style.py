"""Which way each other 535 player plays, read from this round's public moves.

The hard player's playouts need a model of every seat's later moves, and no one model fits all
opponents: modelling three medium players as the tuned policy (:data:`five35_playout.HARD`, which
passes little and leads singles) cost 20 points against them, and modelling three searching
players as medium cost 15 against those (``bench/results/five35_experiments.txt``).  Two kinds of
public evidence tell them apart (bench/five35_styles.py, four-player rounds of self-play, plain
PIMC at 100 ms):

* **Leads.** The medium player leads its biggest set, always while its hand is nearly full (100 of
  101 such leads put down more than one card, 194 of 284 later), a searching player mostly single
  cards (30 of 73 early leads bigger, 55 of 141 later).
* **Follows.** With no seat about to go out, the medium player passes unless its best follow scores
  0 or more, and some follows score below 0 whatever the hand holds (a single of a 9 or higher over
  a single, an 8 while the hand is big: :func:`odd_for_medium`).  The medium player never makes
  one; 69% of a searching player's follow plays are such (209 of 303), and 78 of 80 searching seats
  made one in the round, most within their first few moves.  A follow the medium player could have
  made counts, more weakly, the other way.

Each piece of evidence moves the odds that a seat plays like a searcher rather than like the
medium player by a fixed likelihood ratio, and each seat is modelled with the likelier policy.
(Passes tell the two apart too little, 52% against 59% of follows; adds, 40% against 20% of
follow plays, made medium players read as searchers too early and cost 12 points against them.)

The moves are classified by replaying the public history on the pile alone (passes, the hand
sizes, the pile's effect table, F-8..F-10): no hand is read (G-1).
"""

from __future__ import annotations

import math
from typing import Final

from engine.ai import medium_five35
from engine.ai.five35_playout import HARD, MEDIUM, Weights
from engine.five35.cards import EIGHT
from engine.five35.piles import ADD, MOVES, NCARDS, NMOVES, PASS
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
#: the share of a searching player's follow plays (with no seat about to go out) that the medium
#: player could not have made (their best score is below its pass threshold, whatever the hand),
#: and that share for the medium player, smoothed (it is 0 by construction: bench/five35_styles.py)
ODD_FOLLOW_SEARCHER: Final = 0.69
ODD_FOLLOW_MEDIUM: Final = 0.02
ODD_FOLLOW_LLR: Final = math.log(ODD_FOLLOW_SEARCHER / ODD_FOLLOW_MEDIUM)
FIT_FOLLOW_LLR: Final = math.log((1 - ODD_FOLLOW_SEARCHER) / (1 - ODD_FOLLOW_MEDIUM))
#: whether follows count as evidence (not Final, so that bench/tournament.py can vary it)
FOLLOWS = True
#: the log odds before any lead is seen (below 0: a seat is modelled as the medium player until
#: its leads say otherwise; not Final, so that bench/tournament.py can vary it)
PRIOR = -0.1


def _follow_bound(move: int) -> tuple[float, bool]:
    """The medium player's score of ``move`` before its one hand-dependent term (the groups it
    breaks, which only lowers it), computed in :func:`medium_five35.score_move`'s order so that the
    bound is exact; and whether the move holds an 8 (whose term depends on the public sizes)."""
    kind, ranks = MOVES[move]
    n = NCARDS[move]
    if n == 0:
        return 0.0, False
    score = medium_five35.PER_CARD * n - medium_five35.LOW_RANK * sum(ranks) / n
    if kind == ADD:
        score += medium_five35.ADD_BONUS
    return score, EIGHT in ranks


#: per move, :func:`_follow_bound`
_BOUNDS: Final = tuple(_follow_bound(m) for m in range(NMOVES))


def odd_for_medium(move: int, size: int, danger: bool) -> bool:
    """Whether the medium player could never have made follow ``move`` holding ``size`` cards:
    with no other seat about to go out (``danger`` false) it passes unless its best follow scores
    0 or more, and no hand lifts this move's score above its bound (a broken group only lowers it).
    Going out is always its move."""
    if danger or NCARDS[move] == size:
        return False
    score, eight = _BOUNDS[move]
    if eight:
        if size - NCARDS[move] <= 3:
            score += medium_five35.KEEP_EIGHT
        else:
            score -= medium_five35.KEEP_EIGHT
    return score < 0


def counts(st: State) -> list[tuple[int, int, int, int, int, int]]:
    """Per seat, this round's evidence: its leads (early single-card, early bigger, late single,
    late bigger) and its follow plays with no seat about to go out (those the medium player could
    have made, those it could not: :func:`odd_for_medium`)."""
    out = [[0, 0, 0, 0, 0, 0] for _ in range(st.players)]
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
        else:
            danger = False
            for i, c in enumerate(held):
                if i != seat and c <= medium_five35.DANGER:
                    danger = True
            if not danger and NCARDS[move] != held[seat]:
                out[seat][4 + odd_for_medium(move, held[seat], False)] += 1
        held[seat] -= NCARDS[move]
        new = effect[pile * NMOVES + move]
        if new < 0:  # F-9 size limit or F-10 Rule of 8: a new trick
            pile, in_trick = 0, st.players
        else:
            pile = new
    return [(a, b, c, d, e, f) for a, b, c, d, e, f in out]


def searcher_log_odds(early_single: int, early_multi: int, late_single: int = 0,
                      late_multi: int = 0, fit_follows: int = 0, odd_follows: int = 0) -> float:
    """The log odds that a seat with this evidence plays like a searcher rather than like medium
    (follows count only while :data:`FOLLOWS`)."""
    odds = (PRIOR + early_single * EARLY_SINGLE_LLR + early_multi * EARLY_MULTI_LLR
            + late_single * LATE_SINGLE_LLR + late_multi * LATE_MULTI_LLR)
    if FOLLOWS:
        odds += fit_follows * FIT_FOLLOW_LLR + odd_follows * ODD_FOLLOW_LLR
    return odds


#: the seat's own playout policy when most other seats read as searchers (None: ``own`` always).
#: An experiment, off: :data:`five35_playout.VS_SEARCHERS` there won +2.9 points [-1.7, +7.6]
#: against three PIMC players with 400 deals a decision, but -3.6 [-8.6, +1.5] with the budget's
#: worth of deals, on the same 140 deals (five35_experiments.txt).  Not Final, so that
#: bench/tournament.py can set it.
OWN_VS_SEARCHERS: Weights | None = None


def seat_weights(st: State, seat: int, own: Weights = HARD) -> tuple[Weights, ...]:
    """The playout policy of every seat, for the player at ``seat``: for each other seat the tuned
    policy or the medium player's, whichever its evidence makes likelier (the likelier one, not a
    draw in proportion: drawing the tuned policy for half the playouts of an unread seat won 15
    points less against medium players, five35_experiments.txt); for itself ``own``, or
    :data:`OWN_VS_SEARCHERS` if set, when most other seats read as searchers."""
    out: list[Weights] = []
    searchers = 0
    for s, c in enumerate(counts(st)):
        if s == seat:
            out.append(own)
        elif searcher_log_odds(*c) < 0:
            out.append(MEDIUM)
        else:
            out.append(HARD)
            searchers += 1
    alt = OWN_VS_SEARCHERS
    if alt is not None and 2 * searchers > st.players - 1:
        out[seat] = alt
    return tuple(out)
