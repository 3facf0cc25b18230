"""The own seat's next decisions searched inside the hard 535 player's playouts (issue 38).

Hard's search (:mod:`engine.ai.five35_pimc`) plays every root move out with a policy for every
seat, its own included.  Its root moves are searched; the own seat's *later* moves in a playout
are the policy's, so whatever the policy gets wrong there stays wrong however long the search
runs: against the league's searchers hard gained less from a fourfold budget than they did.

Here the own seat's first ``depth`` decisions after the root are chosen by an **open-loop tree**
per root move: a node per sequence of the own seat's moves (the other seats' moves in between are
not part of the key: they differ from deal to deal, and a node per sequence of them would see a
deal or two), statistics per move across every deal that reached it.  The other seats still play
their models (the reading's), so what hard knows of medium players stays.  Two choices keep the
search no worse than the policy while its counts are small:

* **Progressive widening**: a node considers the policy's best ``1 + widen * sqrt(visits)`` moves
  in the policy's order (pass placed where the policy would weigh it), so its first visits are
  exactly the policy's move and a second move enters only once the first has some deals.
* **UCB1** among the considered moves (rewards in [0, 1], exploration constant ``c``), an unplayed
  one first.

No card is seen that the own seat could not see: each playout is one determinization of the
view (:mod:`engine.ai.five35_sample`), and the tree's keys are the own seat's moves only.
"""

from __future__ import annotations

import math
from typing import Final

from engine.ai import five35_playout
from engine.ai.games import Five35Game
from engine.five35.piles import NCARDS, PASS
from engine.five35.state import State

#: the playout's tie-seed generator (the same constants as :func:`five35_playout.rollout`)
_A: Final = 29773421
_C: Final = 12345
_MASK: Final = (1 << 30) - 1


class Node:
    """The statistics of one own-seat decision point: per move its visits and total reward."""

    __slots__ = ("children", "moves", "visits")

    def __init__(self) -> None:
        self.visits = 0
        self.moves: dict[int, list[float]] = {}
        self.children: dict[int, Node] = {}

    def child(self, move: int) -> Node:
        """The node after ``move`` (made on first use)."""
        node = self.children.get(move)
        if node is None:
            node = Node()
            self.children[move] = node
        return node


def ordered(st: State, w: five35_playout.Weights) -> list[int]:
    """The moves of the seat to move in ``st``, best first by the policy of weights ``w``
    (:func:`five35_playout.move_scores`); pass where the policy weighs it (its pass threshold
    on a pile with no seat in danger, last otherwise), and only when it may pass (on a pile)."""
    scores = five35_playout.move_scores(st, w)
    seat = st.to_move
    if st.pile:
        danger = False
        for i, c in enumerate(st.counts):
            if c <= w.danger and i != seat:
                danger = True
        scores[PASS] = -1e299 if danger else w.pass_t
    out = list(scores)
    out.sort(key=lambda m: -scores[m])
    return out


def select(node: Node, st: State, w: five35_playout.Weights, widen: float, c: float) -> int:
    """The move the tree plays at ``node`` in ``st`` (see the module docstring)."""
    moves = ordered(st, w)
    if not moves:
        return PASS
    if len(moves) == 1 or (NCARDS[moves[0]] == st.counts[st.to_move] and moves[0] != PASS):
        return moves[0]  # forced, or going out (it wins the round, F-12)
    k = 1 + int(widen * math.sqrt(node.visits))
    stats = node.moves
    best, best_score = moves[0], -1.0
    log_n = math.log(node.visits) if node.visits > 1 else 0.0
    for m in moves[:k]:
        s = stats.get(m)
        if s is None or s[0] == 0.0:
            return m  # an unplayed move first, in the policy's order
        score = s[1] / s[0] + c * math.sqrt(log_n / s[0])
        if score > best_score:
            best, best_score = m, score
    return best


def play(game: Five35Game, st: State, seed: int, seat: int, root: Node, depth: int, widen: float,
         c: float) -> float:
    """Play ``st`` out in place, the own ``seat``'s first ``depth`` decisions by the tree from
    ``root`` and every other decision by its seat's model (as :meth:`Five35Game.playout` with the
    same ``seed``); the tree's statistics take the result.  Returns the own seat's reward."""
    players = st.players
    seats = game.seat_weights or (game.weights,) * players
    tables = st.tables
    reqs = five35_playout.reqs_for(tables)
    rows = [five35_playout.rows_for(tables, sw) for sw in seats]
    rules = game.rules
    x = seed & _MASK
    path: list[tuple[Node, int]] = []
    node = root
    d = 0
    while not st.over and not st.rounds:
        x = (x * _A + _C) & _MASK
        s = st.to_move
        if s == seat and d < depth:
            m = select(node, st, seats[s], widen, c)
            path.append((node, m))
            d += 1
            if d < depth:  # the last level's moves need no node after them
                node = node.child(m)
        else:
            m = five35_playout.choose_with(st, rows[s], reqs, x, seats[s])
        rules.apply(st, m)
    r = game.rewards(st)[seat]
    for n, m in path:
        n.visits += 1
        s_ = n.moves.get(m)
        if s_ is None:
            n.moves[m] = [1.0, r]
        else:
            s_[0] += 1.0
            s_[1] += r
    return r
