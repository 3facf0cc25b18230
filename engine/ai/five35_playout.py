"""The 535 playout policy: the medium player's choice, computed from precomputed move rows.

A search's strength at a fixed CPU budget is the number of rounds it can play out, and a playout
spent most of its time in :func:`engine.ai.medium_five35.choose` (a score built from the move's ranks
on every call) and in building the legal-move list.  Here both are folded into one pass over a
per-pile row of ``(move, cards, static score, used-rank mask, has an 8, size)``: legality is the
engine's borrow test on the guarded hand, and the one hand-dependent term of the score, *how many
groups the move breaks* (:data:`engine.ai.medium_five35.BREAK` each), falls out of the same
subtraction (a used rank with copies left has non-zero low bits after it).  The move chosen has exactly the
medium player's score (ties broken uniformly at random, as the medium player's jitter does) and
passes exactly when the medium player does, which ``tests/engine/test_ai_five35_playout.py`` checks
against :func:`engine.ai.medium_five35.choose`.
"""

from __future__ import annotations

from typing import Final

from engine.ai import medium_five35
from engine.five35.cards import EIGHT, FIELD_BITS, GUARD
from engine.five35.game import Five35Rules
from engine.five35.piles import ADD, MOVES, NCARDS, PASS, Tables
from engine.five35.state import State

#: the low (count) bits of one rank's field, below its guard bit
_COUNT_BITS: Final = 7  # (1 << (FIELD_BITS - 1)) - 1

Row = tuple[int, int, float, int, bool, int]


def _static_score(move: int) -> float:
    """The part of the medium score that depends on the move alone (cards shed, low ranks, add)."""
    kind, ranks = MOVES[move]
    n = NCARDS[move]
    score = medium_five35.PER_CARD * n - medium_five35.LOW_RANK * sum(ranks) / n
    if kind == ADD:
        score += medium_five35.ADD_BONUS
    return score


def _used_mask(move: int) -> int:
    """The count bits of every rank the move uses (a hand with copies left there breaks a group)."""
    mask = 0
    for r in set(MOVES[move][1]):
        mask |= _COUNT_BITS << (FIELD_BITS * r)
    return mask


#: per table kind (id of its shared, read-only Tables), the rows of every pile: a handful of
#: table kinds exist (player count x run order), so this cache stays bounded
_ROWS: dict[int, tuple[Tables, list[list[Row]]]] = {}


def rows_for(tables: Tables) -> list[list[Row]]:
    """Per pile id, the rows of the moves that may be legal on it (see the module docstring)."""
    hit = _ROWS.get(id(tables))
    if hit is not None and hit[0] is tables:
        return hit[1]
    rows = [[(m, r, _static_score(m), _used_mask(m), EIGHT in MOVES[m][1], NCARDS[m])
             for m, r in cands] for cands in tables.cands]
    _ROWS[id(tables)] = (tables, rows)
    return rows


#: the playouts' tie-breaking generators (31-bit linear congruential, two different ones so that a
#: decision's draws are not the next decision's seed): a ``random.Random`` per playout cost ~15 us
#: to seed, half a compiled playout, and ties need no better randomness than this
_MASK: Final = 0x7FFFFFFF
_LCG_A: Final = 1103515245
_LCG_C: Final = 12345
_TIE_A: Final = 22695477


def choose(st: State, rows: list[list[Row]], tie: int) -> int:
    """The medium player's move for the seat to move in ``st`` (``rows``: :func:`rows_for`;
    ``tie``: a seed in 0..2**31-1 for breaking ties uniformly at random)."""
    seat = st.to_move
    hand = st.hands[seat] | GUARD
    size = st.counts[seat]
    danger = False
    for i, c in enumerate(st.counts):
        if c <= medium_five35.DANGER and i != seat:
            danger = True
    eight_bonus = medium_five35.KEEP_EIGHT
    keep_eight = -eight_bonus
    brk = medium_five35.BREAK
    best, best_score, ties = PASS, float("-inf"), 0
    for m, req, base, used, eight, n in rows[st.pile]:
        d = hand - req
        if d & GUARD != GUARD:
            continue  # the hand does not hold these cards
        if n == size:
            return m  # going out wins the round (F-12)
        broken = d & used
        if broken:
            # one break per rank with copies left: adding ``used`` carries every such field's
            # non-zero count into its guard bit, so the guard bits set count the broken ranks
            score = base - brk * ((broken + used) & GUARD).bit_count()
        else:
            score = base
        if eight:
            score += eight_bonus if danger or size - n <= 3 else keep_eight
        if score > best_score:
            best, best_score, ties = m, score, 1
        elif score == best_score:
            ties += 1
            tie = (tie * _TIE_A + 1) & _MASK
            if (tie >> 8) % ties == 0:  # reservoir sampling: each tied move kept with chance 1/ties
                best = m
    if st.pile and best_score < 0 and not danger:
        return PASS
    return best


#: typed, so that the compiled playout calls ``apply`` directly (``rules_for`` returns ``Any``)
_RULES: Final = Five35Rules()


def rollout(st: State, seed: int) -> None:
    """Play the round out in place, every seat with the medium player's policy (ties broken by a
    generator seeded with ``seed``: the same seed, the same playout)."""
    rows = rows_for(st.tables)
    rules = _RULES
    x = seed & _MASK
    while not st.over and not st.rounds:
        x = (x * _LCG_A + _LCG_C) & _MASK
        rules.apply(st, choose(st, rows, x))
