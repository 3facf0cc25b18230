"""Which table options the engine accepts: what a settings keyboard may offer.  Pure.

A keyboard never offers a combination that ``/play`` or ``/new`` would refuse, and it learns which
ones those are by asking the engine itself (``engine.new_game`` raises ``ValueError`` for any
impossible combination), so the rules stay in one place.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

# The seat counts a keyboard may offer (the engine's widest range of both games).
SEATS = (2, 3, 4, 5, 6)


def accepts(game: str, players: int, options: dict[str, Any]) -> bool:
    """Whether the engine starts ``game`` for ``players`` seats with ``options``."""
    return _accepts(game, players, tuple(sorted(options.items())))


@lru_cache(maxsize=4096)
def _accepts(game: str, players: int, options: tuple[tuple[str, Any], ...]) -> bool:
    # Imported here: a chat adapter (cinq telegram) needs the engine only when a keyboard is drawn.
    import engine

    try:
        engine.new_game(game, players=players, seed=0, **dict(options))
    except ValueError:
        return False
    return True


def seat_counts(game: str, options: dict[str, Any]) -> list[int]:
    """The seat counts of :data:`SEATS` the engine accepts with ``options`` (empty: none)."""
    return [n for n in SEATS if accepts(game, n, options)]


def in_force(game: str, players: int, options: dict[str, Any]) -> dict[str, Any]:
    """The options the engine plays ``game`` with for ``players`` seats and ``options`` (the defaults
    filled in: a keyboard shows what a choice means now); empty when the engine refuses them."""
    return dict(_in_force(game, players, tuple(sorted(options.items()))))


@lru_cache(maxsize=1024)
def _in_force(game: str, players: int, options: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
    import engine

    try:
        state = engine.new_game(game, players=players, seed=0, **dict(options))
    except ValueError:
        return ()
    return tuple(sorted((engine.view(state, None).get("options") or {}).items()))
