"""AI players: the one function the service asks for an AI seat's move.

It gets only what that seat may know, its engine view (G-1), so it cannot cheat even by mistake.
For now it picks uniformly among the legal moves; stronger players plug in here later.
"""

from __future__ import annotations

import random
from typing import Any

LEVELS = ("easy", "medium", "hard")


def choose_move(view: dict[str, Any], level: str, seed: int) -> str:
    """The move an AI player of ``level`` makes from ``view``, reproducibly for a given ``seed``."""
    moves = view.get("legal_moves") or []
    if not moves:
        raise ValueError("no legal move in this view: it is not this seat's turn")
    return random.Random(seed).choice(sorted(moves))
