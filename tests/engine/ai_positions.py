"""Shared helpers of the AI tests: every game configuration, and positions reached by random play."""

from __future__ import annotations

import random
from typing import Any

import engine

#: (game, players, options): both games, every Cinquillo preset and variant, 2-6 players
CONFIGS: list[tuple[str, int, dict[str, Any]]] = [
    ("cinquillo", 2, {"preset": "clasico"}),
    ("cinquillo", 3, {"preset": "clasico"}),
    ("cinquillo", 4, {"preset": "clasico"}),
    ("cinquillo", 4, {"preset": "clasico", "chips": True, "points": True}),
    ("cinquillo", 3, {"preset": "clasico", "double_turn": True}),
    ("cinquillo", 4, {"preset": "clasico", "cabron": True}),
    ("cinquillo", 4, {"preset": "clasico", "cabron": True, "double_turn": True}),
    ("cinquillo", 4, {"preset": "clasico", "teams": True}),
    ("cinquillo", 2, {"preset": "tradicional"}),
    ("cinquillo", 5, {"preset": "tradicional", "chips": True}),
    ("cinquillo", 6, {"preset": "tradicional", "teams": True, "double_turn": True}),
    ("cinquillo", 6, {"preset": "tradicional", "points": True}),
    ("cinquillo", 5, {"preset": "tradicional", "cabron": True, "chips": True}),
    ("535", 2, {}),
    ("535", 3, {}),
    ("535", 4, {}),
    ("535", 4, {"target": 1}),
    ("535", 5, {"runs_low_beats_high": False}),
    ("535", 6, {}),
    ("535", 4, {"hand_size": 6}),
]


def position(config: tuple[str, int, dict[str, Any]], seed: int, steps: int) -> Any:
    """The state after up to ``steps`` random moves of a seeded match (it may reach later rounds;
    it stops early, still unfinished, before the last move of the match)."""
    game, players, options = config
    state = engine.new_game(game, players=players, seed=seed, **options)
    rng = random.Random(seed)
    for _ in range(steps):
        moves = engine.legal_moves(state)
        nxt = engine.play(state, rng.choice(moves))
        if engine.to_move(nxt) is None:
            break
        state = nxt
    return state
