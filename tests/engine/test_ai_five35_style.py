"""engine.ai.five35_style: each other seat's way of playing, read from how it led this round."""

from __future__ import annotations

import random

from ai_positions import CONFIGS
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.ai import choose_move, five35_playout, five35_style
from engine.ai.games import Five35Game, game_for
from engine.five35.piles import ADD, MOVES, NCARDS

F535 = [c for c in CONFIGS if c[0] == "535"]


@settings(max_examples=40, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(0, 80))
def test_the_moves_read_from_the_public_history_are_the_engines(config, seed, steps):  # F-7, F-9, F-10
    # Reference: the engine's own state says when a trick is being led (no pile); the replay of
    # the history on the pile alone must find exactly those leads, and the follows' adds.
    game, players, options = config
    state = engine.new_game(game, players=players, seed=seed, **options)
    rng = random.Random(seed)
    expected = [[0, 0, 0, 0] for _ in range(players)]
    rounds = len(state.rounds)
    for _ in range(steps):
        seat = engine.to_move(state)
        moves = engine.legal_moves(state)
        if seat is None or not moves:
            break
        move = rng.choice(moves)
        nxt = engine.play(state, move)
        if nxt.over or len(nxt.rounds) != rounds:
            break  # the round's history starts again: stop inside one round
        m = engine.rules_for(state).decode(state, move)
        if state.pile == 0:
            expected[seat][NCARDS[m] > 1] += 1
        elif move != "pass":
            expected[seat][2 if MOVES[m][0] == ADD else 3] += 1
        state = nxt
    assert five35_style.counts(state) == [tuple(e) for e in expected]


def test_single_leads_and_overwrites_make_a_searcher_big_leads_and_adds_the_medium_player():
    assert five35_style.searcher_log_odds(0, 0) == five35_style.PRIOR
    assert five35_style.searcher_log_odds(1, 0) > 0
    assert five35_style.searcher_log_odds(0, 1) < 0
    # one single lead outweighs one big lead (0.59/0.24 against 0.76/0.41)
    assert five35_style.searcher_log_odds(1, 1) > 0
    assert five35_style.searcher_log_odds(1, 2) < 0


def _view_after_leads(seed):
    """A four-player 535 state and view after 16 plies of medium play (a round lasts about 30; its
    leads are mostly big sets)."""
    state = engine.new_game("535", players=4, seed=seed, target=1)
    for ply in range(16):
        seat = engine.to_move(state)
        view = engine.view(state, seat)
        state = engine.play(state, choose_move(view, level="medium", seed=seed * 100 + ply))
    seat = engine.to_move(state)
    return state, engine.view(state, seat)


def test_each_seat_gets_the_model_its_leads_make_likelier():
    _state, view = _view_after_leads(3)
    game = game_for(view, random.Random(1), heuristic_playouts=True)
    assert isinstance(game, Five35Game)
    me = game.info.seat
    seen = five35_style.counts(game.base)
    assert sum(map(sum, seen)) > 0
    models = five35_style.seat_weights(game.base, me, five35_playout.HARD)
    assert models[me] is five35_playout.HARD
    for s, c in enumerate(seen):
        if s != me:
            odds = five35_style.searcher_log_odds(c[0], c[1])
            assert models[s] is (five35_playout.MEDIUM if odds < 0 else five35_playout.HARD)
    # medium players lead big sets: after 16 plies at least one of them reads as medium
    assert five35_playout.MEDIUM in models


def test_the_style_reads_only_the_public_moves():  # G-1
    # The view's rebuilt state (its hidden hands are a guess) and the true state give the same
    # leads and the same models: no hand is read.
    state, view = _view_after_leads(5)
    game = game_for(view, random.Random(2), heuristic_playouts=True)
    assert isinstance(game, Five35Game)
    assert five35_style.counts(game.base) == five35_style.counts(state)
    assert (five35_style.seat_weights(game.base, game.info.seat)
            == five35_style.seat_weights(state, game.info.seat))


def test_a_playout_draws_each_seats_model_with_its_probability():
    probs = (1.0, 0.0, 0.3, 0.8)
    draws = [five35_style.draw(seed, probs) for seed in range(4000)]
    assert five35_style.draw(17, probs) == five35_style.draw(17, probs)  # one seed, one draw
    assert all(d[0] is five35_playout.HARD and d[1] is five35_playout.MEDIUM for d in draws)
    for seat, p in ((2, 0.3), (3, 0.8)):
        share = sum(d[seat] is five35_playout.HARD for d in draws) / len(draws)
        assert abs(share - p) < 0.04, (seat, share)
    # the seats' draws are not one draw repeated
    assert any((d[2] is five35_playout.HARD) != (d[3] is five35_playout.HARD) for d in draws)


def test_the_hard_player_mixes_the_models_by_the_leads_it_saw():
    # What choose_move sets: its own seat always tuned, the others by their leads' odds.
    _state, view = _view_after_leads(3)
    game = game_for(view, random.Random(1), heuristic_playouts=True)
    assert isinstance(game, Five35Game)
    me = game.info.seat
    probs = five35_style.searcher_probabilities(game.base, me)
    assert probs[me] == 1.0
    for s, c in enumerate(five35_style.counts(game.base)):
        if s != me:
            odds = five35_style.searcher_log_odds(c[0], c[1])
            assert 0.0 < probs[s] < 1.0 and (probs[s] < 0.5) == (odds < 0)
    assert min(probs) < 0.5  # medium players' big leads lower their odds


def test_the_games_playout_uses_the_drawn_models():
    _state, view = _view_after_leads(5)
    game = game_for(view, random.Random(3), heuristic_playouts=True)
    assert isinstance(game, Five35Game)
    game.seat_mix = five35_style.searcher_probabilities(game.base, game.info.seat)
    differs = 0
    for seed in range(40):
        deal = game.sample(random.Random(seed))
        played, expected, plain = deal.clone(), deal.clone(), deal.clone()
        game.playout(played, seed)
        five35_playout.rollout(expected, seed, game.weights, five35_style.draw(seed, game.seat_mix))
        five35_playout.rollout(plain, seed, game.weights)
        assert played.history == expected.history
        differs += played.history != plain.history
    assert differs > 0  # the models change some playouts
