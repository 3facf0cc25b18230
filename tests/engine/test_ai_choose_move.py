"""engine.ai.choose_move: every level plays a legal move in every game, variant and player count,
reproducibly, from nothing but the seat's view (G-1)."""

from __future__ import annotations

import inspect
import json

import pytest
from ai_positions import CONFIGS, position
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.ai import LEVELS, choose_move


@settings(max_examples=60, deadline=None)
@given(config=st.sampled_from(CONFIGS), seed=st.integers(0, 2**32), steps=st.integers(0, 80),
       level=st.sampled_from(LEVELS))
def test_every_level_plays_a_legal_move(config, seed, steps, level):  # G-1
    state = position(config, seed, steps)
    seat = engine.to_move(state)
    view = json.loads(json.dumps(engine.view(state, seat)))  # what a process boundary would give
    move = choose_move(view, level=level, seed=seed, iterations=20)
    assert move in engine.legal_moves(state)
    engine.play(state, move)  # accepted by the engine


@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: f"{c[0]}-{c[1]}-{'-'.join(c[2]) or 'default'}")
def test_hard_is_reproducible_with_an_iteration_budget(config):
    for steps in (3, 17, 40):
        state = position(config, 1000 + steps, steps)
        view = engine.view(state, engine.to_move(state))
        a = choose_move(view, level="hard", seed=5, iterations=40)
        b = choose_move(json.loads(json.dumps(view)), level="hard", seed=5, iterations=40)
        assert a == b


def test_medium_and_easy_are_reproducible():
    for config in CONFIGS:
        state = position(config, 77, 12)
        view = engine.view(state, engine.to_move(state))
        for level in ("easy", "medium"):
            assert choose_move(view, level=level, seed=3) == choose_move(view, level=level, seed=3)


def test_the_ai_gets_only_a_view():
    params = inspect.signature(choose_move).parameters
    assert next(iter(params)) == "view"
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for name, p in params.items() if name != "view")


def test_a_time_budget_uses_the_callers_clock():
    state = position(CONFIGS[2], 9, 6)
    view = engine.view(state, engine.to_move(state))
    ticks = iter(range(10**6))
    # a fake clock that advances 1 ms per read: the search stops after about budget_ms reads
    move = choose_move(view, level="hard", seed=1, budget_ms=30, clock=lambda: next(ticks) / 1000)
    assert move in engine.legal_moves(state)
    assert next(ticks) < 30 * 2 + 10


def test_refusals():
    state = position(CONFIGS[2], 4, 5)
    seat = engine.to_move(state)
    with pytest.raises(ValueError, match="level"):
        choose_move(engine.view(state, seat), level="grandmaster", seed=1)
    with pytest.raises(ValueError, match="turn"):
        choose_move(engine.view(state, (seat + 1) % state.players), level="easy", seed=1)
    with pytest.raises(ValueError, match=r"spectator|turn"):
        choose_move(engine.view(state, None), level="hard", seed=1)
