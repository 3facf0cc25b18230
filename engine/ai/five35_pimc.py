"""The hard 535 player's search: determinized Monte Carlo with heuristic playouts, on shared deals.

Why not a tree search: the rounds a search plays out are only as good as their playouts, and
uniformly random playouts (which a tree needs to stay unbiased) shed cards in a way no player
does.  Here every legal move is played out with a heuristic policy for every seat
(:mod:`engine.ai.five35_playout`: the game's ``seat_weights``, a model of each player, see
:mod:`engine.ai.five35_style`), which is a far better model of how a round goes on (Long et al.,
"Understanding the success of perfect information Monte Carlo sampling in game tree search", AAAI
2010, on why this works in card games).

How the budget is spent:

* **Candidates**: every legal move, in the medium player's order (which only breaks ties): the
  moves a heuristic ranks low (leading a single rather than a pair, keeping a set whole) are often
  the best, so none is left out.  A move that puts down the last card wins at once and is played.
* **Shared deals**: each iteration draws one determinization (hidden hands consistent with the
  view) and plays *every* candidate out from it with the same playout seed, so two candidates are
  compared on the same cards (common random numbers: the deal, which decides most of the variance,
  cancels out of their difference).
* **Seat models**: each deal is played out with the game's ``seat_weights``, or, when the hard
  player's reading asks for it, with every seat's policy drawn for that deal (``seat_models``,
  :class:`engine.ai.five35_style.SeatModels`); every candidate of a deal meets the same ones.
* **Budget**: as many deals as the time budget allows (up to an iteration cap); a deal is not
  started when the last one's cost would overrun the budget, so a decision stays within it.

The chosen move is the candidate with the best mean (on a tie, the one the heuristic ranks
higher).  All randomness comes from the ``rng`` passed in; the budget is an iteration count or a
time budget on a caller-supplied clock (the engine reads no clock).  The variants tried and
dropped (a shortlist of the heuristic's best moves, pruning the trailing moves, sequential halving)
and their figures are in ``bench/results/five35_experiments.txt``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from engine.ai import medium_five35
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


def winning_move(game: Five35Game, legal: list[int]) -> int | None:
    """A move that puts down the seat's last card (it wins the round, F-12), if there is one."""
    size = game.base.counts[game.base.to_move]
    for m in legal:
        if m != PASS and NCARDS[m] == size:
            return m
    return None


def evaluate(game: Five35Game, moves: list[int], rng: random.Random, *, iterations: int | None,
             budget_s: float | None = None,
             clock: Callable[[], float] | None = None) -> dict[int, tuple[int, float]]:
    """Play each of ``moves`` out on shared deals; per move, the deals it was played on and its
    total reward.  Stops after ``iterations`` deals or ``budget_s`` seconds on ``clock`` (whichever
    first; a deal is not started when the last one's cost would overrun the budget, so a decision
    stays within it)."""
    if iterations is None and (budget_s is None or clock is None):
        raise ValueError("give an iteration count, or a time budget with a clock")
    rules = game.rules
    seat = game.base.to_move
    totals = dict.fromkeys(moves, 0.0)
    now = clock() if clock is not None else 0.0
    deadline = now + budget_s if clock is not None and budget_s is not None else None
    done = 0
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
        playout_seed = rng.getrandbits(30)
        for m in moves:
            st = deal.clone()
            rules.apply(st, m)
            game.playout(st, playout_seed)
            totals[m] += game.rewards(st)[seat]
    return {m: (done, totals[m]) for m in moves}


def choose(game: Five35Game, rng: random.Random, *, iterations: int | None, budget_s: float | None,
           clock: Callable[[], float] | None) -> int:
    """The hard player's move (an int of the fast path) for the seat to move in ``game``."""
    legal = game.rules.legal(game.base)
    win = winning_move(game, legal)
    if win is not None:
        return win
    moves = candidates(game, legal)
    if len(moves) == 1:
        return moves[0]
    stats = evaluate(game, moves, rng, iterations=iterations, budget_s=budget_s, clock=clock)
    best, best_total = moves[0], -1.0
    for m in moves:  # the best total over the same deals; ties: the heuristic's order
        if stats[m][1] > best_total:
            best, best_total = m, stats[m][1]
    return best
