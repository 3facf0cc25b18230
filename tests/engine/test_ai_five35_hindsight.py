"""engine.ai.five35_hindsight: earlier moves that a seat's later cards rule out for the medium player
(F-2: a hand is never drawn to, so every card played later was held earlier)."""

from __future__ import annotations

import random

from ai_positions import CONFIGS
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.ai import choose_move, five35_hindsight, five35_style
from engine.ai.games import game_for

F535 = [c for c in CONFIGS if c[0] == "535"]


@settings(max_examples=25, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32))
def test_the_medium_player_is_never_ruled_out(config, seed):  # F-2, F-7..F-12
    # The claim the evidence rests on: whatever the table, the seat count and the deal, no move the
    # medium player made is ever called one it could not have made, read from any seat.  A round of
    # medium players, every seat's reading checked before every move.
    game, players, options = config
    state = engine.new_game(game, players=players, seed=seed, **options)
    rounds = len(state.rounds)
    checked = 0
    while (seat := engine.to_move(state)) is not None:
        view = engine.view(state, seat)
        base = game_for(view, random.Random(0), heuristic_playouts=True).base
        assert five35_hindsight.ruled_out(base, seat) == [0] * players
        checked += len(base.history)
        state = engine.play(state, choose_move(view, level="medium", seed=seed + len(base.history)))
        if state.over or len(state.rounds) != rounds:
            break
    assert checked > 0


def _round(hands: list[list[int]], moves: list[str]):
    """A 4-seat round dealt ``hands`` (ranks), after ``moves``."""
    state = engine.new_game("535", players=4, seed=1, hands=hands, target=1)
    for m in moves:
        state = engine.play(state, m)
    return state


# Seat 1 passes over a single 3 while it holds a single 5, which it plays later.  Seat 0 holds the
# other three 5s, so it knows seat 1 held one 5 only: that 5 scored 0.4 (no group broken) and the
# medium player never passes over a 3 with it.  Seat 2, which cannot tell whether seat 1 held more
# 5s (a broken group would score below 0), rules nothing out.
HANDS = [[3, 2, 5, 5, 5, 14, 15], [5, 12, 12, 13, 13], [1, 4, 4, 7, 7], [9, 9, 11, 11, 1]]
MOVES = ["play 3", "pass", "pass", "pass", "play 2", "play 5"]


def test_a_pass_the_later_cards_rule_out_is_counted_by_the_seat_that_can_tell():  # F-2, F-8
    state = _round(HANDS, MOVES)
    seat = engine.to_move(state)
    assert seat == 2
    base0 = game_for(engine.view(state, 0), random.Random(0), heuristic_playouts=True).base
    base2 = game_for(engine.view(state, 2), random.Random(0), heuristic_playouts=True).base
    assert five35_hindsight.ruled_out(base0, 0) == [0, 1, 0, 0]
    assert five35_hindsight.ruled_out(base2, 2) == [0, 0, 0, 0]


def test_the_reading_adds_the_hindsight_ratio_per_move_ruled_out():  # F-2, G-1
    state = _round(HANDS, MOVES)
    base0 = game_for(engine.view(state, 0), random.Random(0), heuristic_playouts=True).base
    off = five35_style.seat_log_odds(base0, 0)
    on = five35_style.seat_log_odds(base0, 0, five35_style.Reading(hindsight=3.0))
    assert on[1] == off[1] + 3.0
    assert on[2:] == off[2:]


def test_a_lead_beaten_by_a_move_the_later_cards_held_is_ruled_out():  # F-2, F-7
    # Seat 1 takes the lead with a 15, then leads a single 13 while it holds the pair of 12s it
    # leads next.  Seat 0 holds the other two 12s, so it knows the pair broke no group: it scored
    # 2 - 0.15 * 9 = 0.65, the single 13 at most 1 - 0.15 * 10 = -0.5, and the medium player leads
    # the best score.  Seat 2 cannot tell whether seat 1 held a third 12 (the pair would then have
    # broken a group, -2.5): nothing is ruled out from there.
    hands = [[12, 12, 13, 13, 1, 2, 3], [13, 13, 12, 12, 15], [1, 4, 4, 7, 7], [9, 9, 11, 11, 1]]
    state = _round(hands, ["play 1", "play 15", "pass", "pass", "pass", "play 13", "pass", "pass", "pass",
                           "play 12 12"])
    assert engine.to_move(state) == 2
    base0 = game_for(engine.view(state, 0), random.Random(0), heuristic_playouts=True).base
    base2 = game_for(engine.view(state, 2), random.Random(0), heuristic_playouts=True).base
    assert five35_hindsight.ruled_out(base0, 0) == [0, 1, 0, 0]
    assert five35_hindsight.ruled_out(base2, 2) == [0, 0, 0, 0]
