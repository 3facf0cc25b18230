"""The hard 535 player's search: determinized Monte Carlo with heuristic playouts, on shared deals.

Why not a tree search: the rounds a search plays out are only as good as their playouts, and
uniformly random playouts (which a tree needs to stay unbiased) shed cards in a way no player
does.  Here every legal move is played out with a heuristic policy for every seat
(:mod:`engine.ai.five35_playout`: the game's ``seat_weights``, a model of each player, see
:mod:`engine.ai.five35_style`; the hard player's own next decisions searched, see *Own tree*),
which is a far better model of how a round goes on (Long et al., "Understanding the success of
perfect information Monte Carlo sampling in game tree search", AAAI 2010, on why this works in
card games).

How the budget is spent:

* **Candidates**: every legal move, in the medium player's order (which only breaks ties): the
  moves a heuristic ranks low (leading a single rather than a pair, keeping a set whole) are often
  the best, so none is left out.  A move that puts down the last card wins at once and is played.
  Two settings of the hard player change this for a measurement (issue 38): a **shortlist**
  (``top``: the own playout policy's best plays, plus pass) and **racing** (``race_z``: a move
  that trails the leader on the shared deals by that many standard errors is played no more).
* **Shared deals**: each iteration draws one determinization (hidden hands consistent with the
  view) and plays *every* candidate out from it with the same playout seed, so two candidates are
  compared on the same cards (common random numbers: the deal, which decides most of the variance,
  cancels out of their difference).
* **Seat models**: each deal is played out with the game's ``seat_weights``, or, when the hard
  player's reading asks for it, with every seat's policy drawn for that deal (``seat_models``,
  :class:`engine.ai.five35_style.SeatModels`); every candidate of a deal meets the same ones.
* **Weighted deals** (``game.belief_beta`` > 0, off in the hard player): each deal's rewards count
  by how well the deal explains the other seats' moves (:mod:`engine.ai.five35_belief`), the
  weights tempered (:mod:`engine.ai.belief_weights`); the deals played and their count are the same.
* **Exact ends** (``game.endgame_cards`` > 0, off in the hard player): once no more than that many
  cards are left in all hands, each deal's end is searched whole (:mod:`engine.ai.five35_endgame`,
  every seat's best reply, or only the own seat's with ``game.endgame_own``) instead of played out;
  a deal whose search would pass ``game.endgame_nodes`` positions is played out as usual.
* **Own tree** (``own_tree``; the hard player's next two decisions): the own seat's next
  decisions in each playout are searched by an open-loop tree per root move
  (:mod:`engine.ai.five35_owntree`) instead of played by the policy.
* **Budget**: as many deals as the time budget allows (up to an iteration cap); a deal is not
  started when the last one's cost would overrun the budget, so a decision stays within it.

The chosen move is the candidate with the best mean (on a tie, the one the heuristic ranks
higher).  All randomness comes from the ``rng`` passed in; the budget is an iteration count or a
time budget on a caller-supplied clock (the engine reads no clock).  The variants tried and
dropped (a shortlist of the heuristic's best moves, pruning the trailing moves, sequential halving)
and their figures are in ``bench/results/five35_experiments.txt``; against the league's
``pimc_race`` (issue 38's fourth pass: ``top``, ``race_z``, ``overrule_z``, none kept), in
``bench/results/league.txt``.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Final

from engine.ai import (
    belief_weights,
    five35_belief,
    five35_endgame,
    five35_owntree,
    five35_playout,
    medium_five35,
)
from engine.ai.games import Five35Game
from engine.five35.piles import NCARDS, PASS


def candidates(game: Five35Game, legal: list[int]) -> list[int]:
    """Every legal move, best first by the medium player's score, pass last when legal."""
    st = game.base
    seat = st.to_move
    hand, size = st.hands[seat], st.counts[seat]
    danger = any(c <= medium_five35.DANGER for i, c in enumerate(st.counts) if i != seat)
    plays = [m for m in legal if m != PASS]
    plays.sort(key=lambda m: -medium_five35.score_move(hand, size, m, danger))
    if PASS in legal:
        plays.append(PASS)
    return plays


def own_policy(game: Five35Game) -> five35_playout.Weights:
    """The weights the own seat is played out with (its seat's, else the game's)."""
    if game.seat_weights is not None:
        return game.seat_weights[game.base.to_move]
    return game.weights


def shortlist(game: Five35Game, moves: list[int], k: int) -> list[int]:
    """The ``k`` plays of ``moves`` that the own seat's playout policy scores highest in the base
    state (:func:`engine.ai.five35_playout.move_scores`), pass added when it is among ``moves``
    (a shortlist spends the budget on fewer moves, each on more deals); all of them when ``k`` is
    0 or there are no more than ``k`` plays.  Ties keep ``moves``' order."""
    plays = [m for m in moves if m != PASS]
    if k <= 0 or len(plays) <= k:
        return moves
    scores = five35_playout.move_scores(game.base, own_policy(game))
    plays.sort(key=lambda m: -scores[m])  # stable: the medium order breaks ties
    out = plays[:k]
    if PASS in moves:
        out.append(PASS)
    return out


#: racing (``race_z``): the deals before the first drop, and between two looks at the moves
RACE_MIN: Final = 16
RACE_BLOCK: Final = 8


def trailing(mine: list[float], lead: list[float], z: float) -> bool:
    """Whether a move whose rewards were ``mine`` trails the leader's ``lead`` (the same deals, so
    the difference is paired) by more than ``z`` standard errors of the mean difference."""
    n = len(mine)
    diffs = [mine[i] - lead[i] for i in range(n)]
    mean = sum(diffs) / n
    if mean >= 0.0:
        return False
    var = sum((x - mean) * (x - mean) for x in diffs) / (n - 1)
    return var == 0.0 or mean < -z * math.sqrt(var / n)


def winning_move(game: Five35Game, legal: list[int]) -> int | None:
    """A move that puts down the seat's last card (it wins the round, F-12), if there is one."""
    size = game.base.counts[game.base.to_move]
    for m in legal:
        if m != PASS and NCARDS[m] == size:
            return m
    return None


def evaluate(game: Five35Game, moves: list[int], rng: random.Random, *, iterations: int | None,
             budget_s: float | None = None, clock: Callable[[], float] | None = None,
             race_z: float = 0.0,
             history: dict[int, list[float]] | None = None,
             plain_totals: dict[int, float] | None = None,
             own_tree: tuple[int, float, float] = (0, 0.0, 0.0)) -> dict[int, tuple[int, float]]:
    """Play each of ``moves`` out on shared deals; per move, the deals it was played on and its
    total reward.  Stops after ``iterations`` deals or ``budget_s`` seconds on ``clock`` (whichever
    first; a deal is not started when the last one's cost would overrun the budget, so a decision
    stays within it).  With ``race_z`` > 0 the moves race: from :data:`RACE_MIN` deals on, every
    :data:`RACE_BLOCK` deals a move that :func:`trailing` the leader by ``race_z`` is played no
    more (its count stops there), and the search ends when one move is left.  ``history``, if
    given (empty), receives every move's reward deal by deal.  ``plain_totals``, if given (empty)
    and the game has ``plain_weights``, receives every move's total reward on the same deals and
    playout seeds played out with those models instead (each deal then costs twice as much).
    ``own_tree`` (depth, widen, c) with a depth > 0: the own seat's next ``depth`` decisions in
    each playout are searched by a tree per move (:mod:`engine.ai.five35_owntree`)."""
    if iterations is None and (budget_s is None or clock is None):
        raise ValueError("give an iteration count, or a time budget with a clock")
    rules = game.rules
    seat = game.base.to_move
    totals = dict.fromkeys(moves, 0.0)
    counts = dict.fromkeys(moves, 0)
    beta = game.belief_beta
    if beta > 0.0 and not any(h & 7 != seat for h in game.base.history):
        beta = 0.0  # no other seat has moved: nothing to weigh the deals by
    lls: list[float] = []
    keep = history is not None or race_z > 0.0 or beta > 0.0
    if history is None:
        history = {}
    if keep:
        for m in moves:
            history[m] = []
    moves = list(moves)
    exact = 0 < sum(game.base.counts) <= game.endgame_cards  # the deals' ends searched exactly
    now = clock() if clock is not None else 0.0
    deadline = now + budget_s if clock is not None and budget_s is not None else None
    done = 0
    depth, widen, c = own_tree
    trees = {m: five35_owntree.Node() for m in moves} if depth > 0 else {}
    while len(moves) > 1:
        if iterations is not None and done >= iterations:
            break
        if deadline is not None and clock is not None and done:
            t = clock()
            cost, now = t - now, t  # the next deal costs about as much as the last one
            if now + cost >= deadline:
                break
        done += 1
        deal = game.sample(rng)
        if game.seat_models is not None:  # the robust reading: this deal's model of each seat
            game.seat_weights = game.seat_models.draw(rng)
        models = game.seat_weights or (game.weights,) * game.base.players
        if beta > 0.0:
            lls.append(five35_belief.log_likelihood(deal, seat, models, beta))
        playout_seed = rng.getrandbits(30)
        solved: list[float] | None = None
        if exact:
            only = seat if game.endgame_own else -1
            solved = five35_endgame.solve_moves(deal, moves, five35_endgame.Search(
                deal, models, game.outcome, game.endgame_nodes, playout_seed, only))
        for i, m in enumerate(moves):
            if solved is not None:
                r = solved[i]
            else:
                st = deal.clone()
                rules.apply(st, m)
                if depth > 0:
                    r = five35_owntree.play(game, st, playout_seed, seat, trees[m], depth, widen, c)
                else:
                    game.playout(st, playout_seed)
                    r = game.rewards(st)[seat]
            totals[m] += r
            counts[m] += 1
            if keep:
                history[m].append(r)
        if plain_totals is not None and game.plain_weights is not None:
            read = game.seat_weights
            game.seat_weights = game.plain_weights
            for m in moves:
                st = deal.clone()
                rules.apply(st, m)
                game.playout(st, playout_seed)
                plain_totals[m] = plain_totals.get(m, 0.0) + game.rewards(st)[seat]
            game.seat_weights = read
        if race_z > 0.0 and done >= RACE_MIN and done % RACE_BLOCK == 0:
            lead = history[max(moves, key=lambda x: totals[x])]
            moves = [m for m in moves if history[m] is lead or not trailing(history[m], lead, race_z)]
    if beta > 0.0 and lls and race_z <= 0.0:  # the weighted means, on the count's scale
        ws = belief_weights.tempered_weights(lls)
        scale = len(ws) / math.fsum(ws)
        for m in totals:
            rs = history[m]
            totals[m] = scale * sum(ws[i] * rs[i] for i in range(len(rs)))
    return {m: (counts[m], totals[m]) for m in totals}


def choose(game: Five35Game, rng: random.Random, *, iterations: int | None, budget_s: float | None,
           clock: Callable[[], float] | None, top: int = 0, race_z: float = 0.0,
           overrule_z: float = 0.0, safe: float = 0.0,
           own_tree: tuple[int, float, float] = (0, 0.0, 0.0)) -> int:
    """The hard player's move (an int of the fast path) for the seat to move in ``game``: among
    the :func:`shortlist` of ``top`` plays (0: every move), raced at ``race_z`` (0: not raced,
    see :func:`evaluate`); with ``overrule_z`` > 0, the own playout policy's move unless the best
    move beats it on the shared deals by more than ``overrule_z`` standard errors (the search's
    best of many noisy means is often a move that was lucky on these deals).  With ``safe`` > 0 and
    the game's ``plain_weights`` set (**safe play**, issue 38): every deal is also played out with
    those models, and the best move by the seats' models is chosen only among the moves whose
    mean with the plain models is within ``safe`` of the best one's there, so that a move which
    pays only if the reading is right cannot cost more than that when it is wrong.  ``own_tree``:
    see :func:`evaluate`."""
    legal = game.rules.legal(game.base)
    win = winning_move(game, legal)
    if win is not None:
        return win
    moves = shortlist(game, candidates(game, legal), top)
    if len(moves) == 1:
        return moves[0]
    history: dict[int, list[float]] | None = {} if overrule_z > 0.0 else None
    plain: dict[int, float] | None = {} if safe > 0.0 and game.plain_weights is not None else None
    stats = evaluate(game, moves, rng, iterations=iterations, budget_s=budget_s, clock=clock,
                     race_z=race_z, history=history, plain_totals=plain, own_tree=own_tree)
    most = max(n for n, _ in stats.values())  # the moves still in the race (every move if none)
    allowed = moves
    if plain and most > 0:  # safe play: the moves within ``safe`` of the plain models' best
        floor = max(plain[m] for m in moves if stats[m][0] == most) - safe * most
        allowed = [m for m in moves if stats[m][0] == most and plain[m] >= floor]
    best, best_total = allowed[0], -1.0
    for m in allowed:  # the best total over the same deals; ties: the heuristic's order
        n, total = stats[m]
        if n == most and total > best_total:
            best, best_total = m, total
    if history is not None and most > 1:
        st, w = game.base, own_policy(game)
        default = five35_playout.choose(st, five35_playout.rows_for(st.tables, w), rng.getrandbits(30), w)
        if (default != best and default in stats and stats[default][0] == most
                and not trailing(history[default], history[best], overrule_z)):
            return default
    return best
