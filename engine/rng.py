"""The project's documented shuffle: SplitMix64 and Fisher–Yates (rule C-8).

Deals must be a pure function of the table's seed, the game, the player count and the round, and
must not change between Python versions, so the engine never uses :mod:`random` for deals.  The
algorithm, written down so that anyone can re-deal a match by hand or in another language:

1. *Key.*  ``key = SHA-256("cinq-deal-v1|<game>|<players>|<round>|<seed>")`` where ``<seed>`` is the
   seed written as ``int:<decimal>`` or ``str:<text>`` (UTF-8).  The first 8 bytes of the digest,
   read big-endian, are the 64-bit SplitMix64 state.
2. *Generator.*  SplitMix64 (Steele, Lea, Flood 2014): ``state += 0x9E3779B97F4A7C15``;
   ``z = state``; ``z = (z ^ z>>30) * 0xBF58476D1CE4E5B9``; ``z = (z ^ z>>27) * 0x94D049BB133111EB``;
   output ``z ^ z>>31``; all arithmetic modulo 2**64.
3. *Uniform integer below n.*  Draw outputs until one is below ``floor(2**64 / n) * n``
   (rejection, so there is no modulo bias); return it modulo ``n``.
4. *Shuffle.*  Fisher–Yates from the end: for ``i`` from ``len-1`` down to ``1``, swap item ``i``
   with item ``below(i + 1)``.  The deck starts in the game's canonical order.
"""

from __future__ import annotations

import hashlib
from collections.abc import MutableSequence
from typing import TypeVar

_MASK = (1 << 64) - 1
_GOLDEN = 0x9E3779B97F4A7C15
_MUL1 = 0xBF58476D1CE4E5B9
_MUL2 = 0x94D049BB133111EB
#: ``(2**64 // n) * n`` (the rejection limit of ``below(n)``) for every n a deal draws below
_LIMITS: tuple[int, ...] = tuple(((1 << 64) // n) * n if n else 0 for n in range(129))

T = TypeVar("T")

Seed = int | str


def check_seed(seed: object) -> Seed:
    """``seed`` itself if it is an int or a str, else ValueError.

    Typed ``object`` because it is where a bad value is caught: the compiled engine would reject a
    wrongly typed argument of a ``Seed`` parameter with a TypeError before the check could run.
    """
    if isinstance(seed, bool) or not isinstance(seed, int | str):
        raise ValueError(f"a seed is an int or a str, not {type(seed).__name__}")
    return seed


def seed_text(seed: object) -> str:
    """The canonical text form of a seed, used in the deal key and shown when a seed is revealed."""
    seed = check_seed(seed)
    return f"int:{seed}" if isinstance(seed, int) else f"str:{seed}"


class SplitMix64:
    """A tiny, fully specified 64-bit generator (see the module docstring)."""

    __slots__ = ("state",)

    def __init__(self, state: int) -> None:
        self.state = state & _MASK

    @classmethod
    def for_deal(cls, seed: Seed, game: str, players: int, round_no: int) -> SplitMix64:
        """The generator that deals round ``round_no`` (0-based) of a match of ``game``."""
        key = f"cinq-deal-v1|{game}|{players}|{round_no}|{seed_text(seed)}".encode()
        return cls(int.from_bytes(hashlib.sha256(key).digest()[:8], "big"))

    def next64(self) -> int:
        """The next 64-bit output."""
        self.state = (self.state + _GOLDEN) & _MASK
        z = self.state
        z = ((z ^ (z >> 30)) * _MUL1) & _MASK
        z = ((z ^ (z >> 27)) * _MUL2) & _MASK
        return z ^ (z >> 31)

    def below(self, n: int) -> int:
        """A uniform integer in ``range(n)``, without modulo bias."""
        if n <= 0:
            raise ValueError("below() needs n > 0")
        limit = _LIMITS[n] if n < len(_LIMITS) else ((1 << 64) // n) * n
        while True:
            r = self.next64()
            if r < limit:
                return r % n

    def shuffle(self, items: MutableSequence[T]) -> None:
        """Shuffle ``items`` in place with Fisher–Yates, last position first.

        Position ``i`` swaps with ``below(i + 1)``.  That draw is written out here (the same
        arithmetic as :meth:`next64` and :meth:`below`, with the limits precomputed) because the
        shuffle is most of the cost of a new round, and 64-bit values are boxed ints even in the
        compiled engine: fewer operations on them is what makes it faster.
        """
        state = self.state
        for i in range(len(items) - 1, 0, -1):
            n = i + 1
            limit = _LIMITS[n] if n < len(_LIMITS) else ((1 << 64) // n) * n
            while True:
                state = (state + _GOLDEN) & _MASK
                z = ((state ^ (state >> 30)) * _MUL1) & _MASK
                z = ((z ^ (z >> 27)) * _MUL2) & _MASK
                r = z ^ (z >> 31)
                if r < limit:
                    break
            j = r % n
            items[i], items[j] = items[j], items[i]
        self.state = state
