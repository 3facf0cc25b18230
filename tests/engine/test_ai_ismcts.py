"""engine.ai.ismcts: the search's budget, reproducibility and the statistics it keeps."""

from __future__ import annotations

import random

import pytest
from ai_positions import CONFIGS, position

import engine
from engine.ai import ismcts
from engine.ai.games import game_for


def _game(config_index: int, seed: int, steps: int):
    state = position(CONFIGS[config_index], seed, steps)
    view = engine.view(state, engine.to_move(state))
    game = game_for(view, random.Random(seed))
    return state, game


@pytest.mark.parametrize("index", [2, 5, 10, 15])
def test_iterations_are_counted_and_reproducible(index):
    state, game = _game(index, 21, 9)
    roots = game.rules.legal(game.base)
    visits = ismcts.search(game, roots, random.Random(4), iterations=60)
    assert sum(visits.values()) == 60
    assert set(visits) == set(roots)
    assert visits == ismcts.search(game, roots, random.Random(4), iterations=60)
    assert ismcts.best_move(visits) in engine.rules_for(state).legal(state)


def test_time_budget_stops_on_the_callers_clock():
    _, game = _game(2, 3, 5)
    roots = game.rules.legal(game.base)
    now = [0.0]

    def clock() -> float:
        now[0] += 0.001
        return now[0]

    visits = ismcts.search(game, roots, random.Random(1), budget_s=0.05, clock=clock)
    assert 0 < sum(visits.values()) <= 50 * ismcts.CLOCK_EVERY


def test_a_budget_is_required():
    _, game = _game(2, 3, 5)
    with pytest.raises(ValueError):
        ismcts.search(game, [], random.Random(1))


def test_a_winning_move_is_found():
    # 535, 2 players: seat 0 leads holding a group it can put down whole to go out at once
    state = engine.new_game("535", players=2, seed=1, hands=[[7, 7, 7], [1, 2, 3, 4, 5]])
    view = engine.view(state, 0)
    game = game_for(view, random.Random(0))
    visits = ismcts.search(game, game.rules.legal(game.base), random.Random(0), iterations=200)
    assert game.rules.encode(game.base, ismcts.best_move(visits)) == "play 7 7 7"


def test_confident_move_keeps_the_default_unless_the_search_is_sure():
    # move 1 was visited most but its mean is barely above the default's: keep the default
    stats = {1: (60, 33.0), 2: (40, 21.0)}
    assert ismcts.confident_move(stats, default=2, z=1.5) == 2
    # a clear difference overrules it
    stats = {1: (300, 240.0), 2: (100, 20.0)}
    assert ismcts.confident_move(stats, default=2, z=1.5) == 1
    assert ismcts.confident_move(stats, default=1, z=1.5) == 1
