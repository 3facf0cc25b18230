"""AI players: the one function the service asks for an AI seat's move.

It gets only what that seat may know, its engine view (G-1), so it cannot cheat even by mistake.
The players themselves are pure engine code (:mod:`engine.ai`: easy, medium, hard); the service
only supplies what the engine may not read itself, the clock for the hard player's time budget.
"""

from __future__ import annotations

import time
from typing import Any

import engine.ai

LEVELS = engine.ai.LEVELS
# The hard player's time cap per decision: its iteration budget normally ends the search well
# before this; the cap keeps a turn prompt on a slow, shared machine.
HARD_BUDGET_MS = 150


def choose_move(view: dict[str, Any], level: str, seed: int) -> str:
    """The move an AI player of ``level`` makes from ``view``, reproducibly for a given ``seed``.

    Raises ValueError when the view is not of the seat to move, or for an unknown level.
    """
    if level == "hard":
        return engine.ai.choose_move(view, level=level, seed=seed,
                                     iterations=engine.ai.DEFAULT_ITERATIONS[view["game"]],
                                     budget_ms=HARD_BUDGET_MS, clock=time.perf_counter)
    return engine.ai.choose_move(view, level=level, seed=seed)
