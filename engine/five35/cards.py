"""The 535 deck (F-1, F-2, F-3) and the packed-count representation of a set of cards.

535 cards have a rank and no suit, so a hand is a multiset of ranks.  The engine stores such a
multiset as one *packed* int: rank index ``i`` (0..12, in the order of :data:`RANKS`) owns the
4-bit field at bits ``4*i .. 4*i+3`` holding how many copies are present (0..5 in play).  Why:
taking cards is one subtraction, and "does the hand hold these cards" is one subtraction and one
mask for all 13 ranks at once (see :func:`holds`), which is what makes the fast path fast.  Four
bits a field keep the whole deck within 52 bits: a machine word for the compiled engine (mypyc
boxes ints from 63 bits on, and every operation on them then goes through the slow path).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

#: The ranks in the deck's order, low to high (F-1: no 6, no 10).  Index in this tuple = rank index.
RANKS: tuple[int, ...] = (1, 2, 3, 4, 5, 7, 8, 9, 11, 12, 13, 14, 15)
NRANKS: Final = 13  # len(RANKS); literal Finals are compiled to constants (tests check them)
#: rank -> rank index
RANK_INDEX: dict[int, int] = {r: i for i, r in enumerate(RANKS)}
#: the index of rank 8 (the Rule of 8, F-10)
EIGHT: Final = 6  # RANK_INDEX[8]

#: F-3 default point values, by rank.
DEFAULT_POINTS: dict[int, int] = {
    1: 1, 2: 1, 3: 1, 4: 1, 5: 1, 7: 2, 9: 2, 11: 3, 12: 3, 13: 3, 14: 4, 15: 4, 8: 5,
}

FIELD_BITS: Final = 4
FIELD_MASK: Final = 15  # (1 << FIELD_BITS) - 1
#: the guard bit of every field (its top bit, bit 3); counts stay below it (at most 5); see :func:`holds`
GUARD: Final = 0x8888888888888
#: packed value of one card of each rank index
UNIT: Final[tuple[int, ...]] = tuple(1 << (FIELD_BITS * i) for i in range(NRANKS))
#: one, two, three cards of every rank (used to test "at least k copies" of all ranks at once)
ONES: Final = 0x1111111111111  # sum(UNIT)
TWOS: Final = 0x2222222222222
THREES: Final = 0x3333333333333


def copies(players: int) -> int:
    """Copies of each rank in the deck (F-1): 4 with 2-4 players, 5 with 5-6."""
    return 5 if players >= 5 else 4


def deck_ranks(players: int) -> list[int]:
    """The whole deck in canonical order (ascending ranks), the order the shuffle starts from."""
    c = copies(players)
    return [r for r in RANKS for _ in range(c)]


def deck_packed(players: int) -> int:
    """The whole deck as a packed multiset."""
    c = copies(players)
    return sum(c * u for u in UNIT)


def default_hand_size(players: int) -> int:
    """F-2: 13 cards each, 10 with 6 players."""
    return 10 if players == 6 else 13


def pack(ranks: Iterable[int]) -> int:
    """The packed multiset of some ranks (each must be a valid rank; counts must stay below 8)."""
    p = 0
    for r in ranks:
        p += UNIT[RANK_INDEX[r]]
    return p


def pack_indices(indices: Iterable[int]) -> int:
    """The packed multiset of some rank *indices*."""
    p = 0
    for i in indices:
        p += UNIT[i]
    return p


def counts(packed: int) -> list[int]:
    """The 13 per-rank counts of a packed multiset."""
    return [(packed >> (FIELD_BITS * i)) & FIELD_MASK for i in range(NRANKS)]


def unpack(packed: int) -> list[int]:
    """The ranks of a packed multiset, ascending."""
    out: list[int] = []
    for i, c in enumerate(counts(packed)):
        out.extend([RANKS[i]] * c)
    return out


def size(packed: int) -> int:
    """The number of cards in a packed multiset."""
    return sum(counts(packed))


def holds(hand: int, cards: int) -> bool:
    """True when the packed ``hand`` contains the packed ``cards`` (every count at least as big).

    Every field of ``hand | GUARD`` is ``8 + count``; subtracting a field of at most 7 never
    borrows from the next field, and clears that field's guard bit exactly when the hand has fewer.
    """
    return ((hand | GUARD) - cards) & GUARD == GUARD


def points_of(packed: int, points: tuple[int, ...]) -> int:
    """The F-3 points of a packed multiset, with ``points`` indexed by rank index."""
    total = 0
    for i in range(NRANKS):
        c = (packed >> (FIELD_BITS * i)) & FIELD_MASK
        if c:
            total += c * points[i]
    return total
