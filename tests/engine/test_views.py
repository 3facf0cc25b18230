"""engine.views: the views of several seats at once equal one engine.view per seat."""

from __future__ import annotations

import random

import pytest

import engine


@pytest.mark.parametrize(("game", "players", "options"), [
    ("cinquillo", 2, {}),
    ("cinquillo", 4, {"preset": "tradicional", "points": True, "target": 30}),
    ("535", 3, {}),
])
def test_views_equal_one_view_per_seat_all_along_a_match(game: str, players: int, options: dict) -> None:
    rnd = random.Random(7)
    s = engine.new_game(game, players=players, seed=11, **options)
    seats = [None, *range(players)]
    for _ in range(5000):
        views = engine.views(s, seats)
        singles = [engine.view(s, seat) for seat in seats]
        assert views == singles
        assert [list(v) for v in views] == [list(v) for v in singles]  # the same keys, in order
        if engine.to_move(s) is None:
            break
        s = engine.play(s, rnd.choice(engine.legal_moves(s)))
    assert engine.to_move(s) is None


def test_views_check_the_seats() -> None:
    s = engine.new_game("cinquillo", players=2, seed=1)
    with pytest.raises(ValueError):
        engine.views(s, [None, 2])
