"""AI players for every game and variant: pure, seeded, and fed only a seat's view (G-1).

One entry point, :func:`choose_move`::

    move = engine.ai.choose_move(engine.view(state, seat), level="hard", seed=7)

Levels: ``easy`` (a random legal move, :mod:`.easy`), ``medium`` (a per-game heuristic,
:mod:`.medium_cinquillo`, :mod:`.medium_five35`), ``hard`` (a search over determinizations that
respect everything the seat saw: :mod:`.hard`, whose docstring says what it is made of).  The view
never holds the seed, the deck or another hand, so an AI cannot cheat; every random choice comes
from ``random.Random(seed)``, so a decision is reproducible.  How strong each level is, against
what, is measured by ``bench/tournament.py`` (``bench/results/``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from engine.ai import easy
from engine.ai.games import game_for
from engine.ai.hard import BUDGET_SHARE, HARD, HardSettings, hard_move

LEVELS = ("easy", "medium", "hard")


def choose_move(view: dict[str, Any], *, level: str, seed: int, budget_ms: int | None = None,
                iterations: int | None = None, clock: Callable[[], float] | None = None,
                settings: HardSettings = HARD) -> str:
    """The move (canonical notation) an AI player of ``level`` makes from a seat's ``view``.

    ``view`` is ``engine.view(state, seat)`` for the seat to move (a JSON round-trip of it works
    the same).  ``seed`` fixes every random choice.  For ``hard``: ``iterations`` caps the search
    (default: the game's cap in ``settings`` when no time budget is given); ``budget_ms`` with
    ``clock`` (a callable returning seconds, e.g. ``time.perf_counter``, supplied by the caller
    since the engine reads no clock) caps it in time; with both, whichever is reached first;
    ``settings`` is the hard player's make-up (:data:`engine.ai.hard.HARD` unless a benchmark
    varies it).  Raises ValueError for an unknown level or a view where the seat has no move.
    """
    if level not in LEVELS:
        raise ValueError(f"unknown AI level {level!r}; the levels are: {', '.join(LEVELS)}")
    moves = view.get("legal_moves") or []
    if not moves or view.get("to_move") != view.get("seat"):
        raise ValueError("no legal move in this view: it is not this seat's turn")
    started = clock() if clock is not None and budget_ms is not None else 0.0
    rng = random.Random(seed)
    if len(moves) == 1:
        return str(moves[0])  # nothing to decide (a forced pass, the opening 5 de oros...)
    if level == "easy":
        return easy.choose(view, rng)
    if level == "medium":
        game = game_for(view, rng)
        rules: Any = game.rules
        return str(rules.encode(game.base, game.medium(rng)))
    # the budget covers the whole decision, from ``started``; a small share is kept back for the
    # search's last step and the answer (p99 <= budget)
    budget_s = None
    if budget_ms is not None and clock is not None:
        budget_s = BUDGET_SHARE * budget_ms / 1000
        if iterations is None:
            iterations = settings.iterations(view["game"])
    return hard_move(view, rng, settings=settings, budget_s=budget_s, started=started,
                     iterations=iterations, clock=clock)


__all__ = ["HARD", "LEVELS", "HardSettings", "choose_move"]
