"""engine.ai.medium_cinquillo and medium_five35: the heuristics do what good players do."""

from __future__ import annotations

import engine
from engine.ai import choose_move


def _cinq(hands):
    return engine.new_game("cinquillo", players=2, seed=0, preset="clasico", hands=hands)


def test_cinquillo_frees_its_own_cards():
    # seat 1 may play 4o or 6o after 5o; it holds 7o, so 6o frees its own next card
    deck = [f"{r}{s}" for s in "oceb" for r in (1, 2, 3, 4, 5, 6, 7, 10, 11, 12)]
    mine = ["4o", "6o", "7o"]
    # seat 0 gets the other oros and every 5, so seat 1's only choice is 4o or 6o
    others = [c for c in deck if (c.endswith("o") or c.startswith("5")) and c not in mine]
    rest = [c for c in deck if c not in others and c not in mine]
    seat1 = mine + rest[:17]
    seat0 = others + rest[17:]
    state = engine.play(_cinq([seat0, seat1]), "5o")
    view = engine.view(state, 1)
    assert {"4o", "6o"} <= set(view["legal_moves"])
    assert choose_move(view, level="medium", seed=1) == "6o"


def test_535_goes_out_when_it_can_and_keeps_groups():
    state = engine.new_game("535", players=2, seed=1, hands=[[7, 7, 7], [1, 2, 3, 4, 5]])
    assert choose_move(engine.view(state, 0), level="medium", seed=1) == "play 7 7 7"
    state = engine.new_game("535", players=2, seed=1, hands=[[2, 2, 3, 9, 14, 8], [1, 2, 3, 4, 5]])
    move = choose_move(engine.view(state, 0), level="medium", seed=1)
    assert move == "play 2 2"  # sheds the low group whole; no 8, no broken group
