"""Cards of the 40-card Spanish deck (C-1, C-2) as small ints, and the bit masks the fast path uses.

A card is the int ``suit * 10 + rank_index``: suits in the order oros, copas, espadas, bastos
(0..3); rank indexes 0..9 for the ranks 1 2 3 4 5 6 7 Sota(10) Caballo(11) Rey(12).  Index order
is play order, so the Sota (index 7) is adjacent to the 7 (index 6): there is no 8 and no 9.
A set of cards (a hand, the table) is an int bit mask with bit ``card`` set.  ``PASS`` (40) is the
integer move for passing.  The notation of a card is its rank number then its suit letter:
``"5o"``, ``"10c"`` (Sota de copas), ``"12b"`` (Rey de bastos).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

SUITS = "oceb"
SUIT_NAMES = ("oros", "copas", "espadas", "bastos")
RANKS = (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)
RANK_NAMES = ("1", "2", "3", "4", "5", "6", "7", "Sota", "Caballo", "Rey")
# Final: the compiled engine reads these as constants, not as module-dict look-ups
FIVE: Final = 4  # rank index of the 5
PASS: Final = 40
DECK_SIZE: Final = 40
FULL: Final = 0xFFFFFFFFFF  # (1 << DECK_SIZE) - 1
FIVE_OROS: Final = 4  # FIVE: the card that opens every round (C-3)

CODES: tuple[str, ...] = tuple(f"{RANKS[r]}{SUITS[s]}" for s in range(4) for r in range(10))
_CODE_TO_INT = {code: i for i, code in enumerate(CODES)}
_CODE_RE = re.compile(r"^(\d{1,2})([a-z])$")

SUIT_MASK: Final = tuple(((1 << 10) - 1) << (10 * s) for s in range(4))
NOT_SUIT_MASK: Final = tuple(FULL ^ m for m in SUIT_MASK)
FIVES: Final = sum(1 << (10 * s + FIVE) for s in range(4))
OTHER_FIVES: Final = FIVES ^ (1 << FIVE_OROS)


def card(code: str) -> int:
    """The int of a card code such as ``"5o"``; raises ValueError for anything else."""
    try:
        return _CODE_TO_INT[code]
    except (KeyError, TypeError):
        raise ValueError(f"{code!r} is not a card (write the rank then the suit letter, e.g. '5o')") from None


def code(c: int) -> str:
    """The code of the card int ``c`` (0..39)."""
    return CODES[c]


def parse_card(text: str) -> int | str:
    """Read a card leniently (spaces, upper case); the int, or an English reason it is not a card."""
    t = text.strip().lower()
    if t in _CODE_TO_INT:
        return _CODE_TO_INT[t]
    m = _CODE_RE.match(t)
    if not m:
        return f"{text!r} is not a card or 'pass' (write the rank then the suit letter, e.g. '5o')"
    rank, suit = int(m.group(1)), m.group(2)
    if suit not in SUITS:
        return f"{suit!r} is not a suit letter (o oros, c copas, e espadas, b bastos)"
    return f"there is no {rank} in the Spanish deck (ranks 1-7, 10 Sota, 11 Caballo, 12 Rey)"


def suit_of(c: int) -> int:
    """The suit index (0 oros, 1 copas, 2 espadas, 3 bastos) of card ``c``."""
    return c // 10


def rank_index(c: int) -> int:
    """The rank index (0..9, play order) of card ``c``."""
    return c % 10


def mask_of(cards: Iterable[int]) -> int:
    """The bit mask of some card ints."""
    m = 0
    for c in cards:
        m |= 1 << c
    return m


# Per suit, the cards and the codes of each of the 1024 patterns of its ten bits: cards_of and
# codes_of are four lookups instead of a loop over the bits (every view and the AI call them).
_SUIT_CARDS: tuple[tuple[tuple[int, ...], ...], ...] = tuple(
    tuple(tuple(10 * s + r for r in range(10) if p >> r & 1) for p in range(1024)) for s in range(4))
_SUIT_CODES: tuple[tuple[tuple[str, ...], ...], ...] = tuple(
    tuple(tuple(CODES[c] for c in cards) for cards in suit) for suit in _SUIT_CARDS)


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def cards_of(mask: int) -> list[int]:
    """The card ints of a mask, ascending (suit order o, c, e, b, then rank)."""
    if mask >> DECK_SIZE or mask < 0:
        return _bits(mask)
    t = _SUIT_CARDS
    return [*t[0][mask & 1023], *t[1][mask >> 10 & 1023], *t[2][mask >> 20 & 1023], *t[3][mask >> 30]]


def codes_of(mask: int) -> list[str]:
    """The card codes of a mask, in canonical order."""
    if mask >> DECK_SIZE or mask < 0:
        return [CODES[c] for c in _bits(mask)]
    t = _SUIT_CODES
    return [*t[0][mask & 1023], *t[1][mask >> 10 & 1023], *t[2][mask >> 20 & 1023], *t[3][mask >> 30]]


def _range_mask(s: int, a: int, b: int) -> int:
    """Cards of suit ``s`` with rank index in ``a..b`` inclusive (empty when a > b)."""
    return sum(1 << (10 * s + r) for r in range(max(a, 0), min(b, 9) + 1))


# Tables indexed by s*100 + low*10 + high for an opened suit whose table cards run low..high.
# ADJACENT: the cards that extend it one step (C-4); OUTSIDE: every card beyond its ends (C-13).
# RANGE (also s*100 + a*10 + b): the cards a..b of a suit, for the cards that cabrón blocks.
ADJACENT: Final[list[int]] = [0] * 400
OUTSIDE: Final[list[int]] = [0] * 400
RANGE: Final[list[int]] = [0] * 400
for _s in range(4):
    for _lo in range(10):
        for _hi in range(10):
            _i = _s * 100 + _lo * 10 + _hi
            RANGE[_i] = _range_mask(_s, _lo, _hi)
            if _lo <= FIVE <= _hi:
                ADJACENT[_i] = _range_mask(_s, _lo - 1, _lo - 1) | _range_mask(_s, _hi + 1, _hi + 1)
                OUTSIDE[_i] = _range_mask(_s, 0, _lo - 1) | _range_mask(_s, _hi + 1, 9)
