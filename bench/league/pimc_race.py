"""League opponent ``pimc_race``: perfect-information Monte Carlo that races a few candidates.

* **Candidates**: in 535 the structure policy's best :data:`CANDIDATES` plays (plus pass when it is
  legal), in Cinquillo every playable card.  A move that empties the hand is played at once.
* **Common random numbers**: each iteration deals one fair determinization and plays every live
  candidate out from it with the same rollout seed, so candidates are compared on the same cards.
* **Racing**: every :data:`BLOCK` deals (after :data:`MIN_DEALS`), a candidate whose paired mean
  difference to the leader is below zero by :data:`RACE_Z` standard errors is dropped.
* **Rollouts**: :func:`bench.league.five35_policies.structure_rollout` (535) and the chain policy
  (:mod:`bench.league.cinquillo_policies`) for every seat.

The move is the live candidate with the best mean.  Written for the league (issue 38) apart from
the engine's players: its own candidates, rollouts, racing and rewards (:mod:`bench.league.worlds`).
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

CANDIDATES = 6
BLOCK = 8
MIN_DEALS = 16
RACE_Z = 2.5


def _candidates(world: Five35World, legal: list[int]) -> list[int]:
    st = world.base
    seat = st.to_move
    counts = five35_policies._counts(st.hands[seat])
    danger = five35_policies._danger(st, seat, 2)
    plays = [m for m in legal if m != PASS]
    plays.sort(key=lambda m: -five35_policies.structure_score(st, m, counts, st.counts[seat], danger))
    out = plays[:CANDIDATES]
    if PASS in legal:
        out.append(PASS)
    return out


def _trails(a: list[float], b: list[float]) -> bool:
    n = len(a)
    d = [a[i] - b[i] for i in range(n)]
    mean = sum(d) / n
    var = sum((x - mean) ** 2 for x in d) / (n - 1)
    se = math.sqrt(var / n)
    return mean < 0 and (se == 0.0 or mean < -RACE_Z * se)


def choose(view: dict[str, Any], seed: int, *, budget_s: float | None = None,
           clock: Callable[[], float] | None = None, iterations: int | None = None) -> str:
    """The move (notation) of ``pimc_race`` for the seat to move in ``view``."""
    rng = random.Random(seed)
    world = world_for(view, rng)
    rules = world.rules
    base = world.base
    legal = rules.legal(base)
    if len(legal) == 1:
        return str(rules.encode(base, legal[0]))
    if isinstance(world, Five35World):
        size = base.counts[base.to_move]
        for m in legal:
            if m != PASS and NCARDS[m] == size:
                return str(rules.encode(base, m))
        moves = _candidates(world, legal)

        def play_out(st: Any, s: int) -> None:
            five35_policies.structure_rollout(st, s)
    else:
        moves = legal

        def play_out(st: Any, s: int) -> None:
            cinquillo_policies.rollout(st, s, "chain")
    seat = world.seat
    rewards: dict[int, list[float]] = {m: [] for m in moves}
    alive = list(moves)
    budget = Budget(budget_s, clock, iterations)
    while len(alive) > 1 and budget.more():
        deal = world.sample(rng)
        s = rng.getrandbits(30)
        for m in alive:
            st = deal.clone()
            rules.apply(st, m)
            if not world.over(st):
                play_out(st, s)
            rewards[m].append(world.rewards(st)[seat])
        n = budget.done
        if n >= MIN_DEALS and n % BLOCK == 0:
            lead = max(alive, key=lambda m: sum(rewards[m]))
            alive = [m for m in alive if m == lead or not _trails(rewards[m], rewards[lead])]
    best = max(alive, key=lambda m: sum(rewards[m]) / max(1, len(rewards[m])))
    return str(rules.encode(base, best))
