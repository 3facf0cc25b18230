"""League opponent ``ismcts``: single-observer information set MCTS (Cowling, Powley and
Whitehouse, IEEE TCIAIG 4(2), 2012), written for the league apart from ``engine.ai.ismcts``.

One tree over move sequences for the searching seat's information set.  Each iteration deals a
fair determinization (:mod:`bench.league.worlds`), descends by UCB1 with availability counts among
the moves legal in that deal, adds one node, rolls the round out with the points policy (535) or
the hold policy (Cinquillo) with random moves mixed in, and credits each node with the reward of
the seat that made its move.  The move played is the root's most visited child.
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

C = 0.7
EPSILON = 0.15


class _Node:
    __slots__ = ("avail", "kids", "player", "reward", "visits")

    def __init__(self, player: int) -> None:
        self.player = player
        self.kids: dict[int, _Node] = {}
        self.visits = 0
        self.reward = 0.0
        self.avail = 1


def choose(view: dict[str, Any], seed: int, *, budget_s: float | None = None,
           clock: Callable[[], float] | None = None, iterations: int | None = None) -> str:
    """The move (notation) of ``ismcts`` for the seat to move in ``view``."""
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
    root = _Node(-1)
    budget = Budget(budget_s, clock, iterations)
    over = world.over
    while budget.more():
        st = world.sample(rng)
        node = root
        path = []
        while not over(st):
            moves = rules.legal(st)
            player = st.to_move if five35 else st.turn
            untried = [m for m in moves if m not in node.kids]
            for m in moves:
                kid = node.kids.get(m)
                if kid is not None:
                    kid.avail += 1
            if untried:
                m = untried[rng.randrange(len(untried))]
                kid = _Node(player)
                node.kids[m] = kid
                node = kid
                path.append(node)
                rules.apply(st, m)
                break
            best, best_v, best_m = None, -1.0, -1
            for m in moves:
                kid = node.kids[m]
                v = kid.reward / kid.visits + C * math.sqrt(math.log(kid.avail) / kid.visits)
                if v > best_v:
                    best, best_v, best_m = kid, v, m
            assert best is not None
            node = best
            path.append(node)
            rules.apply(st, best_m)
        if not over(st):
            if five35:
                five35_policies.points_rollout(st, rng.getrandbits(30), EPSILON)
            else:
                cinquillo_policies.rollout(st, rng.getrandbits(30), "hold", EPSILON)
        rewards = world.rewards(st)
        for nd in path:
            nd.visits += 1
            nd.reward += rewards[nd.player]
    best_move = max(legal, key=lambda m: root.kids[m].visits if m in root.kids else -1)
    return str(rules.encode(base, best_move))
