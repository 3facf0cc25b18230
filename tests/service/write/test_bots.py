"""The service's AI seats: every level plays a legal move from a seat's view alone (G-1)."""

from __future__ import annotations

import json
import time
from concurrent.futures.process import BrokenProcessPool

import pytest

import engine
from service.write import bots


@pytest.mark.parametrize("game,options", [("cinquillo", {}), ("cinquillo", {"preset": "tradicional"}),
                                          ("535", {})])
@pytest.mark.parametrize("level", ["easy", "medium", "hard"])
def test_every_level_plays_a_legal_move_from_a_json_view(game: str, options: dict, level: str) -> None:
    state = engine.new_game(game, players=4, seed=11, **options)
    for turn in range(12):  # a few turns in, so that the hard player has real choices
        seat = engine.to_move(state)
        assert seat is not None
        view = json.loads(json.dumps(engine.view(state, seat)))
        move = bots.choose_move(view, level, seed=turn)
        assert move in engine.legal_moves(state)
        state = engine.play(state, move)


def test_the_same_seed_gives_the_same_decision() -> None:
    state = engine.new_game("535", players=4, seed=3)
    view = engine.view(state, engine.to_move(state))
    assert bots.choose_move(view, "medium", 5) == bots.choose_move(view, "medium", 5)


def test_a_view_of_a_seat_not_to_move_is_refused() -> None:
    state = engine.new_game("535", players=4, seed=3)
    other = (engine.to_move(state) + 1) % 4
    with pytest.raises(ValueError):
        bots.choose_move(engine.view(state, other), "easy", 1)
    with pytest.raises(ValueError, match="level"):
        bots.choose_move(engine.view(state, engine.to_move(state)), "grandmaster", 1)


def _collect(thinker: bots.Thinker, view: dict, level: str, seed: int) -> str:
    """Ask until the move is ready, pausing between asks (the worker waits on the thinker)."""
    while True:
        try:
            return thinker.choose_move(view, level, seed)
        except bots.Thinking:
            time.sleep(0.01)


def test_a_hard_move_is_thought_in_another_process_and_collected_once_ready() -> None:
    state = engine.new_game("535", players=4, seed=11)
    for turn in range(6):
        view = engine.view(state, engine.to_move(state))
        state = engine.play(state, bots.choose_move(view, "medium", turn))
    view = engine.view(state, engine.to_move(state))
    thinker = bots.Thinker()
    try:
        with pytest.raises(bots.Thinking):  # the first ask starts the thinking and returns at once
            thinker.choose_move(view, "hard", 4)
        assert thinker.thinking()
        move = _collect(thinker, view, "hard", 4)
        assert move in engine.legal_moves(state)
        assert not thinker.thinking()
        # easy and medium moves are made in place, never parked
        assert thinker.choose_move(view, "medium", 4) == bots.choose_move(view, "medium", 4)
    finally:
        thinker.close()


def test_a_bad_view_is_refused_when_the_thought_move_is_collected() -> None:
    state = engine.new_game("535", players=4, seed=3)
    other = (engine.to_move(state) + 1) % 4
    thinker = bots.Thinker()
    try:
        with pytest.raises(ValueError, match="turn"):
            _collect(thinker, engine.view(state, other), "hard", 1)
    finally:
        thinker.close()


def test_a_thinking_process_that_dies_fails_its_move_once_and_is_replaced() -> None:
    state = engine.new_game("535", players=4, seed=5)
    view = engine.view(state, engine.to_move(state))
    thinker = bots.Thinker()
    try:
        with pytest.raises(bots.Thinking):
            thinker.choose_move(view, "hard", 1)
        pool = thinker._pool
        assert pool is not None
        for proc in list(pool._processes.values()):  # the process dies mid-thought (OOM, a kill)
            proc.kill()
        with pytest.raises(BrokenProcessPool):  # the worker retries that command, then...
            _collect(thinker, view, "hard", 1)
        assert _collect(thinker, view, "hard", 1) in engine.legal_moves(state)  # ...a new process
    finally:
        thinker.close()
