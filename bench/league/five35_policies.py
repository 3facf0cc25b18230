"""Two 535 playout policies for the league's opponents, written apart from the engine's players.

Neither has the medium player's form (:mod:`engine.ai.medium_five35`, :mod:`engine.ai.five35_playout`):

* :func:`structure_move` (the ``pimc_race`` design) thinks in *plays left*: a move is good when it
  empties whole ranks of the hand (each emptied rank is one play fewer to go out), bad when it
  leaves a rank split, and an overwrite or add that ends the trick is worth the lead it wins.  It
  follows only with a move that does not cost structure, and keeps its 8s for the end.
* :func:`points_move` (``pimc_ucb`` and ``ismcts``) thinks in *points at risk*: it sheds the
  costliest cards first (the options' point table, F-3), follows whenever a play sheds enough
  points or someone is close to going out, and makes a uniformly random legal move with a small
  probability (varied rollouts for the tree and the bandit).

Both read only the seat's own hand, the pile and the public hand sizes (they are rollout policies:
in a playout the hands are a determinization's).  Ties and the random moves come from a 30-bit
linear congruential generator, so a playout is a function of its seed (common random numbers).
"""

from __future__ import annotations

from engine.five35.cards import EIGHT, FIELD_BITS, FIELD_MASK, GUARD, NRANKS
from engine.five35.piles import MOVES, NCARDS, PASS
from engine.five35.state import State
from engine.rules import rules_for

_RULES = rules_for("535")
_MASK = 0x3FFFFFFF


def step(x: int) -> int:
    """The next state of the tie-breaking generator (30 bits, full period)."""
    return (x * 1103515245 + 12345) & _MASK


def _counts(hand: int) -> list[int]:
    return [(hand >> (FIELD_BITS * i)) & FIELD_MASK for i in range(NRANKS)]


def _danger(st: State, seat: int, limit: int) -> bool:
    return any(c <= limit for i, c in enumerate(st.counts) if i != seat)


# --- structure (pimc_race) ---------------------------------------------------------------------


def structure_score(st: State, move: int, counts: list[int], size: int, danger: bool) -> float:
    """How good ``move`` is for the seat to move, by the plays it saves (see the module docstring)."""
    ranks = MOVES[move][1]
    n = NCARDS[move]
    score = 0.3 * n
    seen = -1
    for r in ranks:
        if r == seen:
            continue
        seen = r
        used = ranks.count(r)
        score += 1.0 if used == counts[r] else -1.2
    leading = st.pile == 0
    has8 = EIGHT in ranks
    if leading:
        score -= 0.04 * sum(ranks) / n  # lead low: the high cards win tricks back later
        if has8:
            score -= 1.5
    else:
        ends = st.tables.effect[st.pile * len(MOVES) + move] < 0
        if ends:
            score += 1.0  # the lead is won
        if has8:
            score += 2.5 if danger or size - n <= 3 else -2.0
    return score


def structure_move(st: State, x: int) -> tuple[int, int]:
    """The structure policy's move for the seat to move, and the generator's next state."""
    seat = st.to_move
    hand = st.hands[seat]
    h = hand | GUARD
    size = st.counts[seat]
    counts = _counts(hand)
    danger = _danger(st, seat, 2)
    best, best_score, ties = PASS, -1e9, 0
    for m, req in st.tables.cands[st.pile]:
        if (h - req) & GUARD != GUARD:
            continue
        if NCARDS[m] == size:
            return m, x  # going out ends the round (F-12)
        sc = structure_score(st, m, counts, size, danger)
        if sc > best_score + 1e-9:
            best, best_score, ties = m, sc, 1
        elif sc > best_score - 1e-9:
            ties += 1
            x = step(x)
            if (x >> 7) % ties == 0:
                best = m
    if st.pile and best_score < 0.5 and not danger:
        return PASS, x
    return best, x


def structure_rollout(st: State, seed: int) -> None:
    """Play the round out in place with :func:`structure_move` for every seat."""
    apply = _RULES.apply
    x = seed & _MASK
    while not st.over and not st.rounds:
        m, x = structure_move(st, x)
        apply(st, m)


# --- points (pimc_ucb, ismcts) -----------------------------------------------------------------


def points_score(st: State, move: int, counts: list[int], size: int) -> float:
    """How good ``move`` is for the seat to move, by the points it takes out of the hand."""
    pts = st.options.points
    ranks = MOVES[move][1]
    score = 0.5 * NCARDS[move]
    seen = -1
    for r in ranks:
        score += pts[r]
        if r != seen:
            seen = r
            if ranks.count(r) < counts[r]:
                score -= 1.5  # a rank left split
    if EIGHT in ranks and size > 4:
        score -= 4.0 + pts[EIGHT]  # the 8 is kept to take a trick near the end
    return score


def points_move(st: State, x: int, epsilon: float = 0.1) -> tuple[int, int]:
    """The points policy's move for the seat to move (a random legal one with chance ``epsilon``)."""
    seat = st.to_move
    hand = st.hands[seat]
    h = hand | GUARD
    size = st.counts[seat]
    legal = [m for m, req in st.tables.cands[st.pile] if (h - req) & GUARD == GUARD]
    for m in legal:
        if NCARDS[m] == size:
            return m, x
    if st.pile:
        legal.append(PASS)
    x = step(x)
    if (x & 1023) < epsilon * 1024:
        x = step(x)
        return legal[(x >> 5) % len(legal)], x
    counts = _counts(hand)
    best, best_score = PASS, -1e9
    for m in legal:
        if m == PASS:
            continue
        sc = points_score(st, m, counts, size)
        if sc > best_score:
            best, best_score = m, sc
    if st.pile and best_score < 2.0 and not _danger(st, seat, 3):
        return PASS, x
    return best, x


def points_rollout(st: State, seed: int, epsilon: float = 0.1) -> None:
    """Play the round out in place with :func:`points_move` for every seat."""
    apply = _RULES.apply
    x = seed & _MASK
    while not st.over and not st.rounds:
        m, x = points_move(st, x, epsilon)
        apply(st, m)
