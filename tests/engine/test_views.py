"""engine.views: the views of several seats at once equal one engine.view per seat."""

from __future__ import annotations

import itertools
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


def test_a_view_carries_the_finished_rounds_without_their_moves_and_the_result_keeps_them() -> None:
    """Issue 33: late in a long match every message carried every finished round's moves (~93% of
    its bytes at 60 points with six).  A view's rounds are the public summaries (who won, cards left,
    points); the moves of each round are in the match's result (and its events: G-3)."""
    rnd = random.Random(3)
    s = engine.new_game("cinquillo", players=6, seed=5, preset="tradicional", points=True, target=60)
    sizes = []
    while engine.to_move(s) is not None:
        s = engine.play(s, rnd.choice(engine.legal_moves(s)))
        rounds = engine.view(s, 0)["rounds"]
        assert all("moves" not in r and {"winners", "cards_left", "points"} <= set(r) for r in rounds)
        if rounds and not engine.view(s, 0)["history"]:  # a round just ended
            sizes.append(len(repr(engine.view(s, None))))
    result = engine.result(s)
    assert len(result["rounds"]) == len(engine.view(s, None)["rounds"]) >= 3
    assert all(r["moves"] and all(isinstance(m, list) and len(m) == 2 for m in r["moves"])
               for r in result["rounds"])
    # a round's end view grows by a summary per round, not by a round's moves (~40 pairs each)
    per_round = [(b - a) for a, b in itertools.pairwise(sizes)]
    assert max(per_round) < 400, per_round
