"""The end of a 535 round played exactly on one deal: every seat's best reply, not a policy's.

The hard player's playouts model every later move with a policy (:mod:`.five35_playout`), and in a
round's last tricks a policy's slip decides who goes out first.  When few cards are left in the
hands, the round's end on one deal (every hand known) is small enough to search whole: **max-n**
(Luckhardt and Irani, 1986), each seat choosing the move that is best for itself given the
others' choices, a seat that cannot do better than its policy's move making that move (so a seat
with no way to win plays as its model says, and one with a way to win takes it: the model a
searching opponent is close to at the end of a round, where the cards left are mostly known).
Transpositions share one value (the memo), a move worth the most a seat can get ends the search of
its siblings, and a search that would visit more than ``limit`` positions gives up (None) so that
the caller plays the deal out instead: the cost of a decision stays bounded.
"""

from __future__ import annotations

from typing import Final

from engine.ai import five35_playout
from engine.ai.outcome import Five35Outcome
from engine.five35.game import Five35Rules
from engine.five35.state import State

_RULES: Final = Five35Rules()

#: a reward this close to the most a seat can get (a win, 1.0) ends the search of the seat's moves
_TOP: Final = 1.0 - 1e-9


class Search:
    """One deal's end searched under one model of the seats (their policies break ties)."""

    __slots__ = ("limit", "memo", "nodes", "only", "outcome", "rows", "tie", "weights")

    def __init__(self, st: State, weights: tuple[five35_playout.Weights, ...], outcome: Five35Outcome,
                 limit: int, tie: int, only: int = -1) -> None:
        self.weights = weights
        self.rows = [five35_playout.rows_for(st.tables, w) for w in weights]
        self.outcome = outcome
        self.limit = limit
        self.tie = tie
        #: -1: every seat searches (max-n); else only this seat, the others play their policy
        self.only = only
        self.nodes = 0
        self.memo: dict[tuple[int, ...], list[float]] = {}

    def value(self, st: State) -> list[float] | None:
        """Per seat, the reward of the round's end from ``st`` (not over) under max-n; None once
        the search has visited more than ``limit`` positions."""
        key = (*st.hands, st.pile, st.last, st.passed, st.in_trick, st.to_move)
        got = self.memo.get(key)
        if got is not None:
            return got
        self.nodes += 1
        if self.nodes > self.limit:
            return None
        seat = st.to_move
        moves = _RULES.legal(st)
        if len(moves) > 1:  # the policy's move first: a tie keeps it
            first = five35_playout.choose(st, self.rows[seat], self.tie, self.weights[seat])
            searching = self.only < 0 or seat == self.only
            moves = [first] + [m for m in moves if m != first] if searching else [first]
        best: list[float] | None = None
        for m in moves:
            v = self.after(st, m)
            if v is None:
                return None
            if best is None or v[seat] > best[seat] + 1e-12:
                best = v
                if v[seat] >= _TOP:
                    break
        assert best is not None
        self.memo[key] = best
        return best


    def after(self, st: State, move: int) -> list[float] | None:
        """Per seat, the reward once ``move`` is made in ``st``: the round's if it ends there, else
        :meth:`value`'s."""
        child = st.clone()
        _RULES.apply(child, move)
        return self.outcome.rewards(child) if self.outcome.over(child) else self.value(child)


def solve_moves(deal: State, moves: list[int], search: Search) -> list[float] | None:
    """The seat to move's reward after each of ``moves`` in ``deal`` with the round's end searched
    (:class:`Search`); None when the search gives up (the deal is then played out instead)."""
    seat = deal.to_move
    out: list[float] = []
    for m in moves:
        v = search.after(deal, m)
        if v is None:
            return None
        out.append(v[seat])
    return out
