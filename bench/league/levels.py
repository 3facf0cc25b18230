"""The players a tournament names, and the move each makes from a seat's view.

* ``easy``, ``medium``: the engine's levels.
* ``hard``: the engine's hard player as the service runs it (:data:`engine.ai.HARD`), capped by
  the job's budget; ``hard/<field>=<value>/...`` changes fields of its
  :class:`engine.ai.HardSettings` for a measurement (``hard/five35_own=medium``,
  ``hard/five35_reading.prior=1``: a dotted name sets a field of the 535 reading; weight sets are
  named in :data:`WEIGHTS`, ``none`` is None), and ``ms=N`` gives it its own budget.
* ``pimc`` / ``pimc/w=<weights>``: the engine's 535 search with one playout policy for every seat
  (by default the medium player's): hard's own playout model, kept as a reference point.
* ``pimc_race``, ``pimc_ucb``, ``ismcts``: the league's opponents (:mod:`bench.league`).
* ``xstruct`` / ``xstrong`` (``/ms=N``: own budget), 535 only, a measurement of what makes
  ``pimc_race`` strong (issue 38, sixth pass): the hard player's root (every move on shared deals,
  the best mean) with one rollout policy for every seat, ``pimc_race``'s structure policy or the
  hard player's STRONG weights; interpreted, so a budget buys fewer deals than the engine's search.

``xprior`` / ``xprior/k=N`` (535 only, the sixth pass's follow-up): the hard player's search and
models, but over the ``k`` best plays by ``pimc_race``'s structure score (and pass) instead of
every move, to measure whether that prior is what ``pimc_race`` gains on (the shortlist by hard's
own policy, ``hard/five35_shortlist``, gained nothing).

``xis`` (535 only): the engine's ISMCTS (the Cinquillo hard player's search) over the 535 game
with hard's models of the seats in its playouts, a tree in place of hard's flat search.

An opponent may be a **mixed table**, ``A+B+C``: the opponent seats take those levels in turn from
the tested seat on (:func:`seat_level`).  Three copies of one design model each other well; a table
of people is a mix of styles, and hard reads each seat apart, so a mixed table is its own row.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from collections.abc import Callable
from typing import Any

import engine.ai
from bench import league
from bench.league import five35_policies
from engine.ai import five35_pimc, five35_playout, hard, ismcts
from engine.ai.games import Five35Game, game_for
from engine.five35.piles import PASS

#: the 535 playout weight sets a level may name; ``selfplay``: the medium form tuned by
#: bench/five35_policy.py against three copies of the hard set (it sheds more cards a move and
#: breaks groups more readily; five35_experiments.txt, fourth and sixth rounds); ``fitted``: the
#: set fitted to strong players' moves by bench/five35_fit.py (five35_playout.STRONG); ``expert`` and
#: ``pool2`` (issue 38, ninth pass): refitted on 800 rounds at 100 ms (bench/results/
#: five35_fit_hard100.jsonl), to the hard player's own moves (expert iteration's step) and to every
#: searching family's; measured in league.txt, not the hard player's
WEIGHTS: dict[str, five35_playout.Weights] = {
    "medium": five35_playout.MEDIUM,
    "hard": five35_playout.HARD,
    "selfplay": five35_playout.Weights(card=2.5, low=0.15, add=3.0, brk=0.625, e8near=2.5, e8keep=-0.5,
                                       near=3, danger=8, lead=-2.25, pass_t=-0.5),
    "fitted": five35_playout.STRONG,
    "expert": five35_playout.Weights(card=1.5833333333333333, low=0.15, add=3.0, brk=0.5, e8near=2.0,
                                     e8keep=0.25, near=2, danger=4, lead=-1.375, pass_t=-0.75,
                                     win=1.375),
    "pool2": five35_playout.Weights(card=1.375, low=0.15, add=1.25, brk=0.6666666666666667, e8near=2.5,
                                    e8keep=0.0, near=0, danger=1, lead=-1.25, pass_t=-0.5, win=2.875),
}


def _value(text: str, like: Any) -> Any:
    """``text`` read as the type of the current value ``like``."""
    if text == "none":
        return None
    if isinstance(like, five35_playout.Weights) or text in WEIGHTS:
        return WEIGHTS[text]
    if isinstance(like, bool):
        return text in ("1", "true", "yes")
    if isinstance(like, int):
        return int(text)
    return float(text)


def hard_settings(level: str) -> tuple[engine.ai.HardSettings, int | None]:
    """The settings of a ``hard/...`` level, and its own budget in ms if it names one."""
    settings = engine.ai.HARD
    own_ms = None
    for part in level.split("/")[1:]:
        key, text = part.split("=")
        if key == "ms":
            own_ms = int(text)
        elif key.startswith("five35_reading."):
            field = key.split(".", 1)[1]
            reading = settings.five35_reading
            if field not in {f.name for f in dataclasses.fields(reading)}:
                raise ValueError(f"unknown reading field {field!r} in {level!r}")
            reading = dataclasses.replace(reading, **{field: _value(text, getattr(reading, field))})
            settings = dataclasses.replace(settings, five35_reading=reading)
        elif key in {f.name for f in dataclasses.fields(settings)}:
            settings = dataclasses.replace(settings, **{key: _value(text, getattr(settings, key))})
        else:
            raise ValueError(f"unknown hard setting {key!r} in {level!r}")
    return settings, own_ms


#: settings whose value here means "off" (the hard player as it was before they existed): left out
#: of :func:`fingerprint`, so that adding such a setting keeps the logs' rows of the hard player
NEUTRAL: dict[str, Any] = {"draw": False, "plain": 0.0, "cinquillo_belief_plain": 0.0,
                           "five35_own_medium": None, "five35_own_medium_below": 0.0,
                           "multi_early": 0.41, "multi_late": 0.39, "odd_follow": 0.69,
                           "five35_shortlist": 0, "five35_race_z": 0.0,
                           "five35_overrule_z": 0.0, "five35_jitter": 0.0,
                           "five35_shaping": 0.0, "five35_belief": 0.0, "hindsight": 0.0,
                           "five35_safe": 0.0, "five35_read_from": 3,
                           "five35_endgame": 0, "five35_endgame_nodes": 4000, "five35_endgame_own": False,
                           "five35_own_tree": 0, "five35_own_widen": 0.5, "five35_own_c": 0.5}


#: the fields of a playout policy's weights (the compiled class has no ``__slots__`` to read)
_WEIGHT_FIELDS = ("add", "brk", "card", "danger", "e8keep", "e8near", "lead", "low", "near", "pass_t")
#: weight fields added later, described only when not 0 (so that the older sets keep their rows)
_LATER_FIELDS = ("win", "ranks", "jitter")


def _describe(value: Any) -> str:
    """A value of the hard player's settings as stable text (weights by their fields)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = [f"{f.name}={_describe(getattr(value, f.name))}" for f in dataclasses.fields(value)
                 if f.name not in NEUTRAL or getattr(value, f.name) != NEUTRAL[f.name]]
        return "(" + ",".join(parts) + ")"
    if isinstance(value, five35_playout.Weights):
        later = [k for k in _LATER_FIELDS if getattr(value, k) != 0.0]
        return "W(" + ",".join(f"{k}={getattr(value, k)!r}" for k in (*_WEIGHT_FIELDS, *later)) + ")"
    return repr(value)


#: joins the levels of a mixed table of opponents (``pimc_race+pimc_ucb+ismcts``)
MIXED = "+"


def seat_level(opponent: str, k: int) -> str:
    """The level of the ``k``-th opponent seat (0: the one after the tested seat, clockwise): one
    level, or for a mixed table ``A+B+C`` its levels in turn (the tested seat always has A after it,
    then B, then C, wherever it sits; with more seats than levels they repeat)."""
    parts = opponent.split(MIXED)
    return parts[k % len(parts)]


def fingerprint(level: str) -> str:
    """What a level is made of, as 10 hex digits: for ``hard...`` its settings (and own budget) in
    full, for any other level its name (the league's players are versioned by the repository); for
    a mixed table, of its levels' fingerprints in order."""
    if MIXED in level:
        level = MIXED.join(fingerprint(p) for p in level.split(MIXED))
    text = level
    if level.startswith("hard"):
        settings, own_ms = hard_settings(level)
        text = f"hard {_describe(settings)} ms={own_ms}"
    return hashlib.sha1(text.encode()).hexdigest()[:10]


def decide(level: str, view: dict[str, Any], seed: int, *, budget_ms: int | None,
           iterations: int | None, clock: Callable[[], float]) -> str:
    """The move of ``level`` from ``view`` (two or more legal moves or not), within the budget."""
    if len(view["legal_moves"]) == 1:
        return str(view["legal_moves"][0])
    if level in league.PLAYERS:
        budget_s = engine.ai.BUDGET_SHARE * budget_ms / 1000 if budget_ms else None
        return league.choose(level, view, seed, budget_s=budget_s, clock=clock, iterations=iterations)
    if level.startswith("hard"):
        settings, own_ms = hard_settings(level)
        return engine.ai.choose_move(view, level="hard", seed=seed, settings=settings,
                                     iterations=iterations or settings.iterations(view["game"]),
                                     budget_ms=own_ms or budget_ms, clock=clock)
    if level.split("/")[0] in ("xstruct", "xstrong"):
        if "/ms=" in level:
            budget_ms = int(level.split("/ms=")[1])
        return _x_search(level.split("/")[0], view, seed, budget_ms, clock)
    if level.split("/")[0] == "xprior":
        return _x_prior(level, view, seed, budget_ms, clock)
    if level == "xis":
        return _x_ismcts(view, seed, budget_ms, clock)
    if level.startswith("pimc"):
        return _plain_pimc(level, view, seed, budget_ms, iterations, clock)
    return engine.ai.choose_move(view, level=level, seed=seed)


def _x_search(level: str, view: dict[str, Any], seed: int, budget_ms: int | None,
              clock: Callable[[], float]) -> str:
    """``xstruct`` / ``xstrong`` (see the module docstring): the hard player's root with one
    rollout policy for every seat."""
    started = clock()
    rng = random.Random(seed)
    game = game_for(view, rng, heuristic_playouts=True)
    assert isinstance(game, Five35Game)
    rules = game.rules
    legal = rules.legal(game.base)
    win = five35_pimc.winning_move(game, legal)
    if win is not None:
        return str(rules.encode(game.base, win))
    moves = five35_pimc.candidates(game, legal)
    seat = game.base.to_move
    deadline = started + engine.ai.BUDGET_SHARE * (budget_ms or 100) / 1000
    totals = dict.fromkeys(moves, 0.0)
    now, done = clock(), 0
    while True:
        if done:
            t = clock()
            cost, now = t - now, t
            if now + cost >= deadline:
                break
        done += 1
        deal = game.sample(rng)
        x = rng.getrandbits(30)
        for m in moves:
            st = deal.clone()
            rules.apply(st, m)
            if not game.over(st):
                if level == "xstruct":
                    five35_policies.structure_rollout(st, x)
                else:
                    five35_playout.rollout(st, x, five35_playout.STRONG)
            totals[m] += game.rewards(st)[seat]
    best = moves[0]
    for m in moves:
        if totals[m] > totals[best]:
            best = m
    return str(rules.encode(game.base, best))


def _hard_root(view: dict[str, Any], seed: int, level: str) -> tuple[Five35Game, random.Random, list[int],
                                                                     int | None]:
    """The 535 game of ``view`` set up as the hard player searches it (its models of the seats),
    the decision's generator, the legal moves and a move that goes out (None if there is none)."""
    rng = random.Random(seed)
    game = game_for(view, rng, heuristic_playouts=True, weights=engine.ai.HARD.five35_own)
    if not isinstance(game, Five35Game):
        raise ValueError(f"{level} plays 535 only")
    # the reading at every seat count, as these levels were measured (before the tenth pass the
    # hard player read 2-seat tables too)
    hard.five35_models(game, dataclasses.replace(engine.ai.HARD, five35_read_from=2))
    legal = game.rules.legal(game.base)
    return game, rng, legal, five35_pimc.winning_move(game, legal)


def _x_prior(level: str, view: dict[str, Any], seed: int, budget_ms: int | None,
             clock: Callable[[], float]) -> str:
    """``xprior[/k=N]`` (see the module docstring): the hard player's 535 search, its models and
    budget as the service runs it, over the ``k`` plays (6 by default) that ``pimc_race``'s
    structure score ranks best in the base state, plus pass when legal."""
    started = clock()
    k = 6
    for part in level.split("/")[1:]:
        name, text = part.split("=")
        if name != "k":
            raise ValueError(f"unknown xprior setting {name!r} in {level!r}")
        k = int(text)
    game, rng, legal, win = _hard_root(view, seed, "xprior")
    rules = game.rules
    st = game.base
    if win is not None:
        return str(rules.encode(st, win))
    seat = st.to_move
    counts = five35_policies._counts(st.hands[seat])
    danger = five35_policies._danger(st, seat, 2)
    plays = [m for m in five35_pimc.candidates(game, legal) if m != PASS]
    plays.sort(key=lambda m: -five35_policies.structure_score(st, m, counts, st.counts[seat], danger))
    moves = plays[:k] + ([PASS] if PASS in legal else [])
    if len(moves) == 1:
        return str(rules.encode(st, moves[0]))
    budget_s = engine.ai.BUDGET_SHARE * (budget_ms or 100) / 1000 - (clock() - started)
    stats = five35_pimc.evaluate(game, moves, rng, iterations=engine.ai.HARD.five35_iterations,
                                 budget_s=budget_s, clock=clock)
    best = moves[0]
    for m in moves:  # the best total over the same deals; ties: the structure score's order
        if stats[m][1] > stats[best][1]:
            best = m
    return str(rules.encode(st, best))


def _x_ismcts(view: dict[str, Any], seed: int, budget_ms: int | None, clock: Callable[[], float]) -> str:
    """``xis`` (see the module docstring): the engine's ISMCTS (:mod:`engine.ai.ismcts`) over the
    hard player's 535 game, its playouts played with hard's models of the seats."""
    started = clock()
    game, rng, legal, win = _hard_root(view, seed, "xis")
    rules = game.rules
    if win is not None:
        return str(rules.encode(game.base, win))
    budget_s = engine.ai.BUDGET_SHARE * (budget_ms or 100) / 1000 - (clock() - started)
    stats = ismcts.search_stats(game, legal, rng, iterations=engine.ai.HARD.five35_iterations,
                                budget_s=budget_s, clock=clock)
    return str(rules.encode(game.base, ismcts.best_move({m: n for m, (n, _) in stats.items()})))


def _plain_pimc(level: str, view: dict[str, Any], seed: int, budget_ms: int | None,
                iterations: int | None, clock: Callable[[], float]) -> str:
    """``pimc`` or ``pimc/w=<weights>``: the engine's 535 search, one policy for every seat."""
    started = clock()
    weights = five35_playout.MEDIUM
    for part in level.split("/")[1:]:
        key, text = part.split("=")
        if key != "w":
            raise ValueError(f"unknown pimc setting {key!r} in {level!r}")
        weights = WEIGHTS[text]
    rng = random.Random(seed)
    game = game_for(view, rng, heuristic_playouts=True, weights=weights)
    if not isinstance(game, Five35Game):
        raise ValueError("pimc plays 535 only")
    budget = engine.ai.BUDGET_SHARE * budget_ms / 1000 - (clock() - started) if budget_ms else None
    move = five35_pimc.choose(game, rng, iterations=iterations if iterations or budget_ms else 100,
                              budget_s=budget, clock=clock)
    return str(game.rules.encode(game.base, move))


__all__ = ["NEUTRAL", "WEIGHTS", "decide", "fingerprint", "hard_settings"]
