"""Single-observer Information Set Monte Carlo Tree Search (SO-ISMCTS).

Cowling, Powley and Whitehouse, "Information Set Monte Carlo Tree Search", IEEE TCIAIG 4(2),
2012.  One tree for the searching seat's information set; its nodes are move sequences, shared by
every determinization.  Each iteration:

1. draws a determinization (hidden hands consistent with what the seat saw);
2. descends the tree along moves legal in *that* determinization, picking by UCB1 where the
   number of times a child was *available* replaces the parent's visit count (children that are
   seldom legal are not penalised for it), and expands one untried legal move;
3. plays the round out with a cheap policy on the engine's fast path (integer moves, in place);
4. backs up the round's rewards, each node crediting the seat that made its move, so every seat
   in the tree plays for itself (with teams, its team).

The move chosen is the root child visited most.  All randomness goes through the ``rng`` passed
in; the budget is an iteration count, or a time budget read from a ``clock`` callable supplied
by the caller (the engine itself reads no clock).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from typing import Any, Protocol

#: UCB1 exploration constant for rewards in [0, 1]
EXPLORATION = 0.7
#: iterations between two reads of the clock
CLOCK_EVERY = 8


class Game(Protocol):
    """What the search needs from a game: the fast path and how to draw and score rounds."""

    rules: Any

    def sample(self, rng: random.Random) -> Any:
        """A determinized state of the information set, ready to search (a fresh copy)."""
        ...

    def over(self, state: Any) -> bool:
        """True once the searched round has ended."""
        ...

    def rewards(self, state: Any) -> list[float]:
        """Per seat, the round's reward in [0, 1] (called once ``over``)."""
        ...

    def rollout(self, state: Any, rng: random.Random) -> None:
        """Play the round out in place with the playout policy."""
        ...


class Node:
    """A node of the tree: the move that led here and who made it, with its statistics."""

    __slots__ = ("avail", "children", "move", "parent", "player", "reward", "visits")

    def __init__(self, move: int, parent: Node | None, player: int) -> None:
        self.move = move
        self.parent = parent
        self.player = player
        self.children: dict[int, Node] = {}
        self.visits = 0
        self.reward = 0.0
        self.avail = 1


def _select(node: Node, legal: list[int]) -> Node:
    """UCB1 with availability counts among the children whose moves are legal now."""
    best: Node | None = None
    best_value = -1.0
    children = node.children
    for m in legal:
        child = children[m]
        value = child.reward / child.visits + EXPLORATION * math.sqrt(math.log(child.avail) / child.visits)
        if value > best_value:
            best, best_value = child, value
    assert best is not None
    return best


def search(game: Game, root_moves: list[int], rng: random.Random, *, iterations: int | None = None,
           budget_s: float | None = None, clock: Callable[[], float] | None = None) -> dict[int, int]:
    """Run SO-ISMCTS and return the visit count of each root move (see :func:`search_stats`)."""
    return {m: n for m, (n, _) in search_stats(game, root_moves, rng, iterations=iterations,
                                               budget_s=budget_s, clock=clock).items()}


def search_stats(game: Game, root_moves: list[int], rng: random.Random, *, iterations: int | None = None,
                 budget_s: float | None = None,
                 clock: Callable[[], float] | None = None) -> dict[int, tuple[int, float]]:
    """Run SO-ISMCTS and return, per root move, its visit count and its total reward.

    Stops after ``iterations`` iterations, or once ``budget_s`` seconds have passed on ``clock``
    (both may be given: whichever comes first).  ``root_moves`` are the searching seat's legal
    moves (the same in every determinization: they depend only on its own hand and the table).
    """
    if iterations is None and (budget_s is None or clock is None):
        raise ValueError("give an iteration count, or a time budget with a clock")
    rules = game.rules
    legal_of = rules.legal
    apply = rules.apply
    to_move = rules.to_move
    over = game.over
    rollout = game.rollout
    root = Node(-1, None, -1)
    deadline = clock() + budget_s if clock is not None and budget_s is not None else None
    done = 0
    while True:
        if iterations is not None and done >= iterations:
            break
        if deadline is not None and clock is not None and done % CLOCK_EVERY == 0 and clock() >= deadline:
            break
        done += 1
        st = game.sample(rng)
        node = root
        # selection and expansion
        while not over(st):
            legal = legal_of(st)
            player = to_move(st)
            children = node.children
            untried = [m for m in legal if m not in children]
            for m in legal:
                child = children.get(m)
                if child is not None:
                    child.avail += 1
            if untried:
                m = untried[rng.randrange(len(untried))]
                child = Node(m, node, player)
                children[m] = child
                apply(st, m)
                node = child
                break
            node = _select(node, legal)
            apply(st, node.move)
        rollout(st, rng)  # to the end of the round
        rewards = game.rewards(st)
        # backpropagation: each node is credited with the reward of the seat that moved into it
        back: Node | None = node
        while back is not None and back.parent is not None:
            back.visits += 1
            back.reward += rewards[back.player]
            back = back.parent
        root.visits += 1
    return {m: ((root.children[m].visits, root.children[m].reward) if m in root.children else (0, 0.0))
            for m in root_moves}


def best_move(visits: dict[int, int]) -> int:
    """The most visited root move (the first in move order on a tie, so the choice is stable)."""
    return max(visits, key=lambda m: visits[m])


def confident_move(stats: dict[int, tuple[int, float]], default: int, z: float) -> int:
    """The most visited root move if its mean reward beats ``default``'s by ``z`` standard errors,
    else ``default`` (a heuristic's move): when the search cannot tell two moves apart, the
    heuristic's reasons are the better guide.  Rewards are taken as Bernoulli-like in [0, 1]."""
    best = max(stats, key=lambda m: stats[m][0])
    if best == default or default not in stats:
        return best
    nb, rb = stats[best]
    nd, rd = stats[default]
    if nd == 0:
        return best
    pb, pd = rb / nb, rd / nd
    se = math.sqrt(pb * (1 - pb) / nb + pd * (1 - pd) / nd) or 1e-9
    return best if pb - pd > z * se else default
