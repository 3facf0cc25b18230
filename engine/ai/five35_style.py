"""Which way each other 535 player plays, read from this round's public moves.

The hard player's playouts need a model of every seat's later moves, and no one model fits all
opponents: modelling medium players as the tuned policy (:data:`five35_playout.HARD`, which passes
little and leads singles) predicts their moves badly, and so does modelling searching players as
medium.  Two kinds of public evidence tell them apart:

* **Leads.** The medium player leads its biggest set, nearly always while its hand is nearly full;
  a searching player mostly leads single cards.  Early and late leads are counted apart.
* **Follows.** With no seat about to go out, the medium player passes unless its best follow scores
  0 or more, and some follows score below 0 whatever the hand holds (a single of a 9 or higher over
  a single, an 8 while the hand is big: :func:`odd_for_medium`).  The medium player never makes
  one, most searching players make one within their first few moves.  A follow the medium player
  could have made counts, more weakly, the other way.

Each piece of evidence moves the odds that a seat plays like a searcher rather than like the
medium player by a fixed likelihood ratio, and each seat is modelled with the likelier policy.
Passes and adds are not evidence: they tell the two apart too little.  The counts behind the
ratios, and what each variant won, are in ``bench/results/five35_experiments.txt`` (fifth and
sixth rounds; ``bench/five35_styles.py`` counts them again).

**Robust reading** (issue 38): a seat that is neither model (a person, another program) is read into
one of them all the same, and a wrong model costs strength.  Two settings of :class:`Reading` keep
the models from being trusted further than the evidence goes: ``draw`` plays each deal's seat out
with a model drawn in proportion to its odds (an uncertain seat gets both), and ``plain`` keeps a
share of every seat's deals away from the reading altogether (each model half of that share), so
that a seat the reading got wrong still has deals played out the other way.  With either set, the
search draws the seats' models per deal (:class:`SeatModels`); with neither, each seat keeps its
likelier model as before.

**Hindsight** (``Reading.hindsight``, off): each earlier move of a seat that the cards it showed
later rule out for the medium player (:mod:`.five35_hindsight`) adds that log-likelihood ratio.
The medium player never makes such a move, so the evidence costs nothing against it; against
pimc_race it was measured not to gain (``bench/results/league.txt``, eighth pass).

The moves are classified by replaying the public history on the pile alone (passes, the hand
sizes, the pile's effect table, F-8..F-10): no hand is read (G-1).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Final

from engine.ai import five35_hindsight, medium_five35
from engine.ai.five35_playout import MEDIUM, STRONG, Weights
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


@dataclass(frozen=True, slots=True)
class Reading:
    """How the hard player reads and models the other seats.

    ``prior``: a seat's log odds of searching before any evidence; ``follows``: whether follows
    count as evidence (leads always do); a seat whose log odds are below ``medium_below`` is played
    out as the medium player, any other as ``searcher`` (by default :data:`five35_playout.STRONG`,
    fitted to strong players' moves, issue 38; :data:`five35_playout.HARD` before).  ``draw`` and
    ``plain``: the robust reading (see the module docstring): the model drawn per deal in
    proportion to the odds (shifted by ``medium_below``), and the share of each seat's deals that
    ignores the reading.  ``multi_early``, ``multi_late``, ``odd_follow``: the searcher's shares
    the evidence is weighed with (by default the module's; :data:`POOLED` fits them to the league's
    searching families pooled).  ``hindsight``: the log-likelihood ratio of each earlier move that
    the seat's later cards show the medium player could not have made
    (:func:`.five35_hindsight.ruled_out`; 0: not read).
    """

    prior: float = -0.1
    follows: bool = True
    medium_below: float = 0.0
    searcher: Weights = STRONG
    draw: bool = False
    plain: float = 0.0
    multi_early: float = MULTI_SEARCHER_EARLY
    multi_late: float = MULTI_SEARCHER_LATE
    odd_follow: float = ODD_FOLLOW_SEARCHER
    hindsight: float = 0.0


#: the hard player's reading (below 0 a seat is taken for the medium player until its moves say
#: otherwise)
READING: Final[Reading] = Reading()

#: the searcher's shares counted over the league's searching families pooled (pimc_race, pimc_ucb,
#: ismcts and the hard player, 60 rounds at 25 ms, bench/results/five35_fit_games.jsonl, as the
#: STRONG weights were fitted): early leads of more than one card 113 of 192, late 175 of 290, odd
#: follows 346 of 701.  The families written apart from hard lead sets far more often than the
#: searchers the module's shares were counted on (pimc_race 86% of its early leads, medium 98%), so
#: a set lead says less for medium.  Measured, not yet the hard player's (bench/results/league.txt,
#: third pass)
POOLED: Final[Reading] = Reading(multi_early=0.59, multi_late=0.60, odd_follow=0.49)


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


def searcher_log_odds(evidence: tuple[int, int, int, int, int, int], reading: Reading = READING) -> float:
    """The log odds that a seat with this evidence (a row of :func:`counts`) plays like a searcher
    rather than like medium."""
    early_single, early_multi, late_single, late_multi, fit_follows, odd_follows = evidence
    if (reading.multi_early == MULTI_SEARCHER_EARLY and reading.multi_late == MULTI_SEARCHER_LATE
            and reading.odd_follow == ODD_FOLLOW_SEARCHER):  # the module's ratios, computed once
        es, em, ls, lm = EARLY_SINGLE_LLR, EARLY_MULTI_LLR, LATE_SINGLE_LLR, LATE_MULTI_LLR
        fit, odd = FIT_FOLLOW_LLR, ODD_FOLLOW_LLR
    else:
        es = math.log((1 - reading.multi_early) / (1 - MULTI_MEDIUM_EARLY))
        em = math.log(reading.multi_early / MULTI_MEDIUM_EARLY)
        ls = math.log((1 - reading.multi_late) / (1 - MULTI_MEDIUM_LATE))
        lm = math.log(reading.multi_late / MULTI_MEDIUM_LATE)
        fit = math.log((1 - reading.odd_follow) / (1 - ODD_FOLLOW_MEDIUM))
        odd = math.log(reading.odd_follow / ODD_FOLLOW_MEDIUM)
    odds = reading.prior + early_single * es + early_multi * em + late_single * ls + late_multi * lm
    if reading.follows:
        odds += fit_follows * fit + odd_follows * odd
    return odds


def seat_log_odds(st: State, seat: int, reading: Reading = READING) -> list[float]:
    """Per seat, the log odds that it plays like a searcher (:func:`searcher_log_odds` of its
    :func:`counts`, plus ``reading.hindsight`` for each move of its that its later cards rule out
    for the medium player), as the player at ``seat`` reads them (its own entry is meaningless)."""
    odds = [searcher_log_odds(c, reading) for c in counts(st)]
    if reading.hindsight:
        for s, n in enumerate(five35_hindsight.ruled_out(st, seat)):
            odds[s] += reading.hindsight * n
    return odds


def all_read_medium(st: State, seat: int, reading: Reading = READING, below: float = 0.0) -> bool:
    """Whether every seat but ``seat`` reads as the medium player, its log odds below ``below``
    (the hard player's own seat then plays out with other weights: engine.ai.hard.own_weights)."""
    return all(o < below for s, o in enumerate(seat_log_odds(st, seat, reading)) if s != seat)


def searcher_chances(st: State, seat: int, reading: Reading = READING) -> list[float]:
    """Per seat, the share of deals on which it is played out as ``reading.searcher`` (the rest as
    the medium player); the player's own seat gets 0 (it is never drawn)."""
    out: list[float] = []
    for s, o in enumerate(seat_log_odds(st, seat, reading)):
        if s == seat:
            out.append(0.0)
            continue
        odds = o - reading.medium_below
        if reading.draw:
            fitted = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, odds))))
        else:
            fitted = 0.0 if odds < 0 else 1.0
        out.append(reading.plain * 0.5 + (1.0 - reading.plain) * fitted)
    return out


class SeatModels:
    """Every seat's playout policy drawn afresh for each deal of a search: the own seat ``own``,
    each other seat ``searcher`` with its chance (:func:`searcher_chances`), else the medium
    player's."""

    def __init__(self, seat: int, own: Weights, chances: list[float], searcher: Weights) -> None:
        self.seat = seat
        self.own = own
        self.chances = chances
        self.searcher = searcher

    def draw(self, rng: random.Random) -> tuple[Weights, ...]:
        """One deal's policies (one draw of ``rng`` per other seat)."""
        out: list[Weights] = []
        for s, p in enumerate(self.chances):
            if s == self.seat:
                out.append(self.own)
            else:
                out.append(self.searcher if rng.random() < p else MEDIUM)
        return tuple(out)


def seat_models(st: State, seat: int, own: Weights = STRONG,
                reading: Reading = READING) -> SeatModels | None:
    """The per-deal draw of the seats' policies when ``reading`` asks for one (``draw`` or
    ``plain``), else None (each seat keeps :func:`seat_weights`)."""
    if not reading.draw and reading.plain <= 0.0:
        return None
    return SeatModels(seat, own, searcher_chances(st, seat, reading), reading.searcher)


def seat_weights(st: State, seat: int, own: Weights = STRONG,
                 reading: Reading = READING) -> tuple[Weights, ...]:
    """The playout policy of every seat, for the player at ``seat``: ``own`` for itself, and for
    each other seat the medium player's or ``reading.searcher``, by its evidence (the likelier
    model, not a draw in proportion: see the module docstring)."""
    out: list[Weights] = []
    for s, o in enumerate(seat_log_odds(st, seat, reading)):
        if s == seat:
            out.append(own)
        elif o < reading.medium_below:
            out.append(MEDIUM)
        else:
            out.append(reading.searcher)
    return tuple(out)
