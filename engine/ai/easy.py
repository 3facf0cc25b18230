"""The easy player: a uniformly random legal move."""

from __future__ import annotations

import random
from typing import Any


def choose(view: dict[str, Any], rng: random.Random) -> str:
    """A random move among the view's legal moves (sorted first, so only ``rng`` decides)."""
    moves = sorted(view["legal_moves"])
    return str(moves[rng.randrange(len(moves))])
