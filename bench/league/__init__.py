"""The league's opponents (issue 38): searchers written apart from the engine's hard player.

Each is a function ``choose(view, seed, *, budget_s, clock, iterations) -> move`` on a seat's view
(G-1), for both games, every variant and player count, at the time budget it is given:

* ``pimc_race`` (:mod:`.pimc_race`): PIMC on common random numbers, a few candidates raced;
  structure and chain rollouts.
* ``pimc_ucb`` (:mod:`.pimc_ucb`): PIMC with a UCB1 bandit over every move, fresh deals per pull;
  points and hold rollouts with random moves mixed in.
* ``ismcts`` (:mod:`.ismcts`): single-observer ISMCTS with those rollouts.

``bench/tournament.py`` names them as levels.  They share with the engine only the rules, the
view's facts (``engine.ai.infoset``) and the state builders; their heuristics, rollouts, searches
and rewards are their own (see each module), so that hard is measured against players it was not
built from.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench.league import ismcts, pimc_race, pimc_ucb

PLAYERS: dict[str, Callable[..., str]] = {
    "pimc_race": pimc_race.choose,
    "pimc_ucb": pimc_ucb.choose,
    "ismcts": ismcts.choose,
}


def choose(name: str, view: dict[str, Any], seed: int, *, budget_s: float | None = None,
           clock: Callable[[], float] | None = None, iterations: int | None = None) -> str:
    """The move of league player ``name`` for the seat to move in ``view``."""
    return PLAYERS[name](view, seed, budget_s=budget_s, clock=clock, iterations=iterations)
