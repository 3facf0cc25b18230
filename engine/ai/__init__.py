"""AI players for every game and variant: pure, seeded, and fed only a seat's view (G-1).

One entry point, :func:`choose_move`::

    move = engine.ai.choose_move(engine.view(state, seat), level="hard", seed=7)

Levels: ``easy`` (a random legal move, :mod:`.easy`), ``medium`` (a per-game heuristic,
:mod:`.medium_cinquillo`, :mod:`.medium_five35`), ``hard`` (a search over determinizations that
respect everything the seat saw, :mod:`.infoset`, :mod:`.cinquillo_sample`, :mod:`.five35_sample`).
The view never holds the seed, the deck or another hand, so an AI cannot cheat; every random
choice comes from ``random.Random(seed)``, so a decision is reproducible.

The hard player per game (measured in ``bench/tournament.py``, results in ``bench/results/``):

* 535: determinized Monte Carlo over every legal move, each played out to the end of the round
  with a policy of the medium player's form (:mod:`.five35_playout`, computed in one pass over
  precomputed rows): for each other seat the weights tuned to win (:data:`PLAYOUT_535`) or the
  medium player's, whichever that seat's leads and follows this round make likelier, and for its
  own seat the tuned weights (:mod:`.five35_style`, :data:`STYLES_535`; the same search with the
  medium player's playouts for every seat is the benchmark's plain PIMC player), on shared deals
  (:mod:`.five35_pimc`), uniform deals, no pruning, as many as the time budget allows
  (:data:`PRUNE_535`: pruning measured worse at 100 ms; deals weighted by the others' moves,
  :mod:`.five35_belief`, measured worse, untempered and tempered, so :data:`BELIEF_POOL` is 0:
  ``bench/results/five35_experiments.txt``).
* Cinquillo: SO-ISMCTS with the medium player as playout policy, 300 iterations by default, over
  200 deals weighted by how likely the others' plays are under a model of the medium player
  (:mod:`.cinquillo_belief`, tempered: +2.1 points over uniform deals); it plays the medium
  player's card unless the search finds a better one by :data:`OVERRULE_Z` standard errors (with
  uniform deals, search alone did not pick better cards than the heuristic; see
  ``bench/results/cinquillo_experiments.txt``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from engine.ai import easy, five35_pimc, five35_playout, five35_style
from engine.ai.games import Five35Game, game_for
from engine.ai.ismcts import best_move, confident_move, search_stats

LEVELS = ("easy", "medium", "hard")
#: per game, the hard player's iterations when neither ``iterations`` nor a time budget is given
#: (535: an iteration is one deal on which every legal move is played out, so the first decisions
#: of a round, with many moves, cost far more than the last; callers cap them with a time budget.
#: with 400 the late decisions, with few moves, stopped at about 40 ms of a 100 ms budget, and
#: letting them use it won 5.4 points [+0.8, +9.9] against three PIMC players, on the same 140 deals
#: (bench/results/five35_experiments.txt); 5000, not 1000, since the playouts became about 1.8x
#: faster, so that the budget, not the cap, still stops nearly every decision)
DEFAULT_ITERATIONS = {"cinquillo": 300, "535": 5000}
#: per game, whether the hard player's playouts follow the medium player (else random moves)
HEURISTIC_PLAYOUTS = {"cinquillo": True, "535": True}
#: per game, how many deals are drawn and weighted by the others' moves (0: uniform deals; see
#: :mod:`engine.ai.cinquillo_belief` and :mod:`engine.ai.five35_belief`).  Cinquillo: 200 deals at
#: BETA 4, tempered, measured +2.1 points over uniform deals; 535: 0, measured worse untempered and
#: tempered (-9.4 points [-14.7, -4.1] over 120 paired deals)
BELIEF_POOL = {"cinquillo": 200, "535": 0}
#: 535: whether the search stops playing out the moves that trail clearly (five35_pimc); measured
#: off: over 100 duplicate deals at 100 ms, pruning at z=3 lost 3.0 points [-0.5, +6.5] against
#: comparing every move to the end (bench/results/five35_experiments.txt)
PRUNE_535 = False
#: 535: whether the search spends its budget by sequential halving (equal shares of the budget, the
#: worse half of the moves dropped at the end of each; five35_pimc.evaluate)
HALVING_535 = False
#: per game, how sure the search must be (standard errors) to overrule the medium player's move;
#: None: always play the search's most visited move
OVERRULE_Z: dict[str, float | None] = {"cinquillo": 1.5, "535": None}

#: the hard 535 player's playout policy (:class:`engine.ai.five35_playout.Weights`): the medium
#: player's form with tuned weights (bench/five35_policy.py), a better model of how a round goes on
PLAYOUT_535 = five35_playout.HARD
#: whether the hard 535 player models each other seat by how it leads (:mod:`.five35_style`: the
#: tuned policy or the medium player's) rather than every seat with :data:`PLAYOUT_535`
STYLES_535 = True

#: the share of a time budget the search may plan on (the rest absorbs a step's overrun)
BUDGET_SHARE = 0.97


def choose_move(view: dict[str, Any], *, level: str, seed: int, budget_ms: int | None = None,
                iterations: int | None = None, clock: Callable[[], float] | None = None) -> str:
    """The move (canonical notation) an AI player of ``level`` makes from a seat's ``view``.

    ``view`` is ``engine.view(state, seat)`` for the seat to move (a JSON round-trip of it works
    the same).  ``seed`` fixes every random choice.  For ``hard``: ``iterations`` caps the search
    (default :data:`DEFAULT_ITERATIONS` of the game when no time budget is given); ``budget_ms``
    with ``clock`` (a callable returning seconds, e.g. ``time.perf_counter``, supplied by the caller
    since the engine reads no clock) caps it in time; with both, whichever is reached first.
    Raises ValueError for an unknown level or a view where the seat has no move.
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
    hard = level == "hard"
    game = game_for(view, rng, heuristic_playouts=hard and HEURISTIC_PLAYOUTS[view["game"]],
                    belief_pool=BELIEF_POOL[view["game"]] if hard else 0,
                    weights=PLAYOUT_535 if hard else five35_playout.MEDIUM)
    rules: Any = game.rules  # either game's rules: the calls below are the protocol's
    if level == "medium":
        return str(rules.encode(game.base, game.medium(rng)))
    timed = budget_ms is not None and clock is not None
    if iterations is None and not timed:
        iterations = DEFAULT_ITERATIONS[view["game"]]
    # the budget covers the whole decision: what building the game took comes off the search's,
    # and a small share is kept back for the search's last step and the answer (p99 <= budget)
    budget_s = (BUDGET_SHARE * budget_ms / 1000 - (clock() - started)
                if timed and budget_ms is not None and clock else None)
    if isinstance(game, Five35Game):
        if STYLES_535:
            game.seat_weights = five35_style.seat_weights(game.base, game.info.seat, PLAYOUT_535)
        return str(rules.encode(game.base, five35_pimc.choose(
            game, rng, iterations=iterations, budget_s=budget_s, clock=clock, prune=PRUNE_535,
            halving=HALVING_535)))
    root_moves = rules.legal(game.base)
    z = OVERRULE_Z[view["game"]]
    default = game.medium(rng) if z is not None else -1
    stats = search_stats(game, root_moves, rng, iterations=iterations,
                         budget_s=budget_s, clock=clock)
    if z is not None:
        return str(rules.encode(game.base, confident_move(stats, default, z)))
    return str(rules.encode(game.base, best_move({m: n for m, (n, _) in stats.items()})))


__all__ = ["DEFAULT_ITERATIONS", "LEVELS", "choose_move"]
