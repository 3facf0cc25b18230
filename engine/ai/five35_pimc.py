"""The hard 535 player: determinized Monte Carlo with heuristic playouts, on shared deals.

Why not a tree search: the rounds a search plays out are only as good as their playouts, and
uniformly random playouts (which a tree needs to stay unbiased) shed cards in a way no player
does.  Here every root candidate is played out with a heuristic policy for every seat
(:mod:`engine.ai.five35_playout`, about 16 us a whole round with the compiled engine: the game's
``weights``, per seat: for the hard player its tuned set for itself, which leads single cards,
adds to the pile on follows and passes only on the costliest ones, and for the others that or the
medium player's, by their leads and follows (:mod:`engine.ai.five35_style`); the benchmark's plain
PIMC player uses the medium player's for all), which is a far better model of how a round goes on (Long et
al., "Understanding the success of perfect information Monte Carlo sampling in game tree search",
AAAI 2010, on why this works in card games).

How the budget is spent:

* **Candidates**: every legal move (:data:`TOP_K` = 0), in the medium player's order.  Comparing
  only its best 4 or 8 plays plus pass lost 7 to 8 points against three medium players (100 deals
  at 50 ms): the moves the heuristic ranks low (leading a single rather than a pair, keeping a
  set whole) are often the best.  A move that puts down the last card wins at once and is played.
* **Shared deals**: each iteration draws one determinization (hidden hands consistent with the
  view) and plays *every* surviving candidate out from it with the same playout seed, so two
  candidates are compared on the same cards (common random numbers: the deal, which decides
  most of the variance, cancels out of their difference).
* **Pruning** (optional, ``prune``; the hard player leaves it off, ``engine.ai.PRUNE_535``: at
  100 ms it cost about 3 points, bench/results/five35_experiments.txt): every :data:`BLOCK` deals,
  a candidate whose paired mean difference to the leader is below zero by :data:`PRUNE_Z`
  standard errors (after :data:`PRUNE_AFTER` deals) is dropped, so the budget goes to the moves
  still in doubt.
* **Sequential halving** (optional, ``halving``; off, ``engine.ai.HALVING_535``): the budget in
  :func:`halving_rounds` equal shares, the worse half of the moves dropped after each, so the last
  two get most of the deals.  It gained nothing against PIMC players (-0.4 points [-3.0, +2.2],
  bench/results/five35_experiments.txt, seventh round).
* **Budget**: a deal is not started when the last one's cost would overrun the time budget, so
  a decision stays within it (CPU p99 per decision in bench/results/tournament.txt).

The chosen move is the surviving candidate with the best mean (on a tie, the one the heuristic
ranks higher).  All randomness comes from the ``rng`` passed in; the budget is an iteration
count or a time budget on a caller-supplied clock (the engine reads no clock).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable

from engine.ai import medium_five35
from engine.ai.games import Five35Game
from engine.five35.piles import NCARDS, PASS

#: how many of the heuristic's best plays are compared, 0: all (pass comes on top when legal)
TOP_K = 0
#: deals between two pruning passes
BLOCK = 8
#: a candidate is dropped once it trails the leader by this many standard errors (paired)
PRUNE_Z = 3.0
#: no pruning before this many deals (early differences are mostly noise)
PRUNE_AFTER = 24


def candidates(game: Five35Game, legal: list[int], top_k: int) -> list[int]:
    """The moves worth comparing, best first by the medium player's score: its ``top_k`` best
    plays, then pass if legal (``top_k`` <= 0: every legal move)."""
    st = game.base
    seat = st.to_move
    hand, size = st.hands[seat], st.counts[seat]
    danger = any(c <= medium_five35.DANGER for i, c in enumerate(st.counts) if i != seat)
    plays = [m for m in legal if m != PASS]
    plays.sort(key=lambda m: -medium_five35.score_move(hand, size, m, danger))
    chosen = plays if top_k <= 0 else plays[:top_k]
    if PASS in legal:
        chosen.append(PASS)
    return chosen


def winning_move(game: Five35Game, legal: list[int]) -> int | None:
    """A move that puts down the seat's last card (it wins the round, F-12), if there is one."""
    size = game.base.counts[game.base.to_move]
    for m in legal:
        if m != PASS and NCARDS[m] == size:
            return m
    return None


class _Tally:
    """Per candidate, its reward on each shared deal (the deals line up across candidates)."""

    __slots__ = ("rewards",)

    def __init__(self) -> None:
        self.rewards: list[float] = []

    def mean(self) -> float:
        return sum(self.rewards) / len(self.rewards) if self.rewards else 0.0


def _trails(a: list[float], b: list[float], z: float) -> bool:
    """Whether ``a`` is worse than ``b`` by ``z`` standard errors of their paired difference."""
    n = min(len(a), len(b))
    if n < 2:
        return False
    diffs = [a[i] - b[i] for i in range(n)]
    mean = sum(diffs) / n
    var = sum((d - mean) ** 2 for d in diffs) / (n - 1)
    se = math.sqrt(var / n)
    if se == 0.0:
        return mean < 0.0 and n >= BLOCK * 2  # always worse on every deal so far
    return mean < -z * se


def evaluate(game: Five35Game, moves: list[int], rng: random.Random, *, iterations: int | None,
             budget_s: float | None = None, clock: Callable[[], float] | None = None,
             prune: bool = True, prune_z: float = PRUNE_Z,
             prune_after: int = PRUNE_AFTER, halving: bool = False) -> dict[int, tuple[int, float]]:
    """Play each of ``moves`` out on shared deals; per move, the deals it was played on and its
    total reward.  Stops after ``iterations`` deals or ``budget_s`` seconds on ``clock`` (whichever
    first; a deal is not started when the last one's cost would overrun the budget, so a decision
    stays within it); with ``prune`` the clearly worse moves stop being played, with ``halving``
    the worse half at the end of each of :func:`halving_rounds` equal shares of the budget (see
    the module docstring)."""
    if iterations is None and (budget_s is None or clock is None):
        raise ValueError("give an iteration count, or a time budget with a clock")
    rules = game.rules
    seat = game.base.to_move
    tallies = {m: _Tally() for m in moves}
    alive = list(moves)
    now = clock() if clock is not None else 0.0
    deadline = now + budget_s if clock is not None and budget_s is not None else None
    cost = 0.0  # the last deal's time: the next one costs about as much (or less, after pruning)
    done = 0
    rounds = halving_rounds(len(moves)) if halving else 1
    start, round_no, round_deals = now, 0, 0
    while len(alive) > 1:
        if iterations is not None and done >= iterations:
            break
        if deadline is not None and clock is not None and done:
            t = clock()
            cost, now = t - now, t
            if now + cost >= deadline:
                break
        if round_no < rounds - 1 and round_deals and (
                now >= start + (deadline - start) * (round_no + 1) / rounds if deadline is not None
                else iterations is not None and round_deals >= iterations // rounds):
            # the end of a share of the budget: keep the better half (on a tie, the heuristic's
            # order); the survivors have all been played on the same deals
            alive.sort(key=lambda m: -tallies[m].mean())
            alive = alive[:(len(alive) + 1) // 2]
            round_no, round_deals = round_no + 1, 0
        done += 1
        round_deals += 1
        deal = game.sample(rng)
        playout_seed = rng.getrandbits(30)
        for m in alive:
            st = deal.clone()
            rules.apply(st, m)
            game.playout(st, playout_seed)
            tallies[m].rewards.append(game.rewards(st)[seat])
        if prune and done % BLOCK == 0 and done >= prune_after:
            leader = max(alive, key=lambda m: tallies[m].mean())
            best = tallies[leader].rewards
            alive = [m for m in alive if m == leader or not _trails(tallies[m].rewards, best, prune_z)]
    return {m: (len(t.rewards), sum(t.rewards)) for m, t in tallies.items()}


def halving_rounds(k: int) -> int:
    """The shares of the budget sequential halving splits a decision among ``k`` moves into: one
    per halving until two moves are left, and the last share for those two."""
    rounds = 1
    while k > 2:
        k = (k + 1) // 2
        rounds += 1
    return rounds


def choose(game: Five35Game, rng: random.Random, *, iterations: int | None, budget_s: float | None,
           clock: Callable[[], float] | None, top_k: int = TOP_K, prune: bool = True,
           prune_z: float = PRUNE_Z, prune_after: int = PRUNE_AFTER, halving: bool = False) -> int:
    """The hard player's move (an int of the fast path) for the seat to move in ``game``
    (``top_k``, ``prune``, ``prune_z``, ``prune_after``, ``halving``: see the module constants and
    :func:`evaluate`; the benchmark varies them)."""
    legal = game.rules.legal(game.base)
    win = winning_move(game, legal)
    if win is not None:
        return win
    moves = candidates(game, legal, top_k)
    if len(moves) == 1:
        return moves[0]
    stats = evaluate(game, moves, rng, iterations=iterations, budget_s=budget_s, clock=clock,
                     prune=prune, prune_z=prune_z, prune_after=prune_after, halving=halving)
    # the best mean among the moves played out the longest (the survivors); ties: heuristic order
    most = max(n for n, _ in stats.values())
    best, best_mean = moves[0], -1.0
    for m in moves:
        n, total = stats[m]
        if n == most and n and total / n > best_mean:
            best, best_mean = m, total / n
    return best
