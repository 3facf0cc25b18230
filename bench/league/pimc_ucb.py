"""League opponent ``pimc_ucb``: perfect-information Monte Carlo with a UCB1 bandit at the root.

Every legal move is an arm.  Each pull deals a fresh fair determinization, plays the chosen move
and rolls the round out with the points policy (535) or the hold policy (Cinquillo), both with a
small share of random moves (:mod:`bench.league.five35_policies`,
:mod:`bench.league.cinquillo_policies`); the arm's reward is the seat's (:mod:`bench.league.worlds`).
Arms are chosen by UCB1 (exploration :data:`C`), so the budget goes to the moves still in doubt;
the move played is the most pulled.  No common random numbers, no candidate cut: a different
design from ``pimc_race`` on purpose.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any

from bench.league import cinquillo_policies, five35_policies
from bench.league.budget import Budget
from bench.league.worlds import Five35World, world_for
from engine.five35.piles import NCARDS, PASS

C = 0.5
EPSILON = 0.1


def choose(view: dict[str, Any], seed: int, *, budget_s: float | None = None,
           clock: Callable[[], float] | None = None, iterations: int | None = None) -> str:
    """The move (notation) of ``pimc_ucb`` for the seat to move in ``view``."""
    rng = random.Random(seed)
    world = world_for(view, rng)
    rules = world.rules
    base = world.base
    legal = rules.legal(base)
    if len(legal) == 1:
        return str(rules.encode(base, legal[0]))
    five35 = isinstance(world, Five35World)
    if five35:
        size = base.counts[base.to_move]
        for m in legal:
            if m != PASS and NCARDS[m] == size:
                return str(rules.encode(base, m))
    seat = world.seat
    pulls = dict.fromkeys(legal, 0)
    total = dict.fromkeys(legal, 0.0)
    budget = Budget(budget_s, clock, iterations)
    n = 0
    while budget.more():
        if n < len(legal):
            m = legal[n]
        else:
            log_n = math.log(n)
            m = max(legal, key=lambda a: total[a] / pulls[a] + C * math.sqrt(log_n / pulls[a]))
        n += 1
        st = world.sample(rng)
        rules.apply(st, m)
        if not world.over(st):
            if five35:
                five35_policies.points_rollout(st, rng.getrandbits(30), EPSILON)
            else:
                cinquillo_policies.rollout(st, rng.getrandbits(30), "hold", EPSILON)
        pulls[m] += 1
        total[m] += world.rewards(st)[seat]
    best = max(legal, key=lambda a: (pulls[a], total[a] / pulls[a] if pulls[a] else 0.0))
    return str(rules.encode(base, best))
