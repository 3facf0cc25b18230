"""engine.ai.five35_style: each other seat's way of playing, read from how it led and followed this
round."""

from __future__ import annotations

import math
import random

import pytest
from ai_positions import CONFIGS
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
import engine.ai
from engine.ai import choose_move, five35_pimc, five35_playout, five35_style, medium_five35
from engine.ai.games import Five35Game, game_for
from engine.five35.cards import RANKS, pack_indices
from engine.five35.piles import MOVES, NCARDS, NMOVES, PASS

F535 = [c for c in CONFIGS if c[0] == "535"]


@settings(max_examples=40, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(0, 80))
def test_the_evidence_read_from_the_public_history_is_the_engines(config, seed, steps):  # F-7..F-11
    # Reference: the engine's own state says when a trick is being led (no pile), how many cards
    # each seat holds and whether another seat is about to go out; the replay of the history on the
    # pile alone must find the same leads and follows.
    game, players, options = config
    state = engine.new_game(game, players=players, seed=seed, **options)
    start = list(state.counts)
    rng = random.Random(seed)
    expected = [[0, 0, 0, 0, 0, 0] for _ in range(players)]
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
        n = NCARDS[m]
        if state.pile == 0:
            late = state.counts[seat] < start[seat] - five35_style.EARLY
            expected[seat][2 * late + (n > 1)] += 1
        elif m != PASS:
            danger = any(c <= medium_five35.DANGER for i, c in enumerate(state.counts) if i != seat)
            if not danger and n != state.counts[seat]:
                odd = five35_style.odd_for_medium(m, state.counts[seat], False)
                expected[seat][4 + odd] += 1
        state = nxt
    assert five35_style.counts(state) == [tuple(e) for e in expected]


@settings(max_examples=200, deadline=None)
@given(move=st.integers(1, NMOVES - 1), ranks=st.lists(st.integers(0, 12), min_size=1, max_size=13),
       extra=st.integers(0, 10))
def test_a_follow_called_odd_scores_below_the_medium_players_pass_threshold(move, ranks, extra):
    # F-8: with no seat about to go out, the medium player passes unless its best follow scores 0
    # or more; a move called odd must score below 0 whatever else the hand holds.
    hand = pack_indices(sorted(list(MOVES[move][1]) + ranks))
    size = len(MOVES[move][1]) + len(ranks) + extra
    score = medium_five35.score_move(hand, size, move, False)
    if five35_style.odd_for_medium(move, size, False):
        assert score < 0
    assert not five35_style.odd_for_medium(move, size, True)  # danger: medium plays whatever is best
    assert not five35_style.odd_for_medium(move, NCARDS[move], False)  # going out: always its move


def test_a_high_single_over_a_single_is_odd_and_a_low_one_fits():  # F-6, F-8
    # The medium player overwrites a single only with a low card (its score is 1 - 0.15 x the
    # rank's index: below 0 from the 9 up) and keeps its 8s until near the end.
    def single(rank):
        return next(m for m in range(1, NMOVES) if MOVES[m] == (1, (rank,)))

    index = {r: i for i, r in enumerate(RANKS)}
    assert five35_style.odd_for_medium(single(index[12]), 10, False)
    assert five35_style.odd_for_medium(single(index[9]), 10, False)
    assert not five35_style.odd_for_medium(single(index[7]), 10, False)
    assert five35_style.odd_for_medium(single(index[8]), 10, False)  # an 8 kept while the hand is big
    assert not five35_style.odd_for_medium(single(index[8]), 4, False)  # and played near the end


def test_the_medium_player_never_makes_an_odd_follow():  # F-8
    # By construction: the medium player's own follows (60 rounds of four-player self-play) are
    # never read as a searcher's, and it makes many that count for medium.
    totals = [0] * 6
    for seed in range(60):
        state = engine.new_game("535", players=4, seed=seed, target=1)
        ply = 0
        while (seat := engine.to_move(state)) is not None:
            move = choose_move(engine.view(state, seat), level="medium", seed=seed * 1000 + ply)
            nxt = engine.play(state, move)
            if nxt.over or nxt.rounds:
                break
            state, ply = nxt, ply + 1
        for c in five35_style.counts(state):
            totals = [a + b for a, b in zip(totals, c, strict=True)]
    assert totals[5] == 0
    assert totals[4] > 300


def _odds(*evidence, reading=five35_style.READING):
    return five35_style.searcher_log_odds((*evidence, *[0] * (6 - len(evidence))), reading)


def test_single_leads_make_a_searcher_and_big_leads_the_medium_player():
    odds = _odds
    prior = five35_style.READING.prior
    assert odds(0, 0) == prior < 0  # no lead seen: the medium player
    assert odds(1, 0) > 2  # medium nearly never leads a single card while its hand is full
    assert odds(0, 1) < prior and odds(0, 0, 0, 1) < prior
    assert odds(0, 0, 1, 0) > 0  # one late single lead is enough to tip the balance
    assert odds(0, 1, 1, 0) < 0 < odds(1, 1)


def test_an_odd_follow_makes_a_searcher_and_fitting_ones_the_medium_player():
    odds = _odds
    prior = five35_style.READING.prior
    assert odds(0, 0, 0, 0, 0, 1) > 3  # a follow the medium player never makes
    assert odds(0, 0, 0, 0, 1, 0) < prior  # one it could have made: likelier medium
    assert odds(0, 0, 0, 0, 2, 1) > 0  # one odd follow outweighs two fitting ones
    assert odds(1, 0, 0, 0, 3, 0) < 0  # three fitting follows outweigh an early single lead
    leads_only = five35_style.Reading(follows=False)
    assert odds(0, 0, 0, 0, 0, 1, reading=leads_only) == prior


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
            searcher = five35_style.READING.searcher
            want = five35_playout.MEDIUM if five35_style.searcher_log_odds(c) < 0 else searcher
            assert models[s] is want
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


def test_the_hard_player_plays_out_with_the_models_its_leads_give():
    # choose_move sets the game's per-seat models; a playout must then follow them.
    _state, view = _view_after_leads(5)
    game = game_for(view, random.Random(3), heuristic_playouts=True)
    assert isinstance(game, Five35Game)
    game.seat_weights = five35_style.seat_weights(game.base, game.info.seat)
    differs = 0
    for seed in range(40):
        deal = game.sample(random.Random(seed))
        played, expected, plain = deal.clone(), deal.clone(), deal.clone()
        game.playout(played, seed)
        five35_playout.rollout(expected, seed, game.weights, game.seat_weights)
        five35_playout.rollout(plain, seed, game.weights)
        assert played.history == expected.history
        differs += played.history != plain.history
    assert differs > 0  # the models change some playouts


def test_the_robust_reading_draws_each_seats_model_per_deal():
    # Issue 38: with ``draw`` each seat's chance of the searcher model is its odds' probability,
    # with ``plain`` a share of every seat's deals ignores the reading (half each model); the own
    # seat is never drawn.  Off (the default), there is nothing to draw.
    _state, view = _view_after_leads(3)
    game = game_for(view, random.Random(1), heuristic_playouts=True)
    assert isinstance(game, Five35Game)
    me = game.info.seat
    assert five35_style.seat_models(game.base, me) is None
    plain = five35_style.Reading(plain=1.0)
    assert five35_style.searcher_chances(game.base, me, plain) == [0.0 if s == me else 0.5 for s in range(4)]
    drawn = five35_style.searcher_chances(game.base, me, five35_style.Reading(draw=True))
    for s, c in enumerate(five35_style.counts(game.base)):
        if s != me:
            odds = five35_style.searcher_log_odds(c)
            assert drawn[s] == pytest.approx(1 / (1 + math.exp(-odds)))
    fitted = five35_style.searcher_chances(game.base, me, five35_style.Reading(plain=0.5))
    models = five35_style.seat_weights(game.base, me)
    for s in range(4):
        if s != me:
            assert fitted[s] == (0.75 if models[s] is five35_style.READING.searcher else 0.25)
    mix = five35_style.seat_models(game.base, me, five35_playout.HARD, plain)
    assert mix is not None
    rng = random.Random(7)
    seen = [set() for _ in range(4)]
    for _ in range(200):
        drawn_models = mix.draw(rng)
        assert drawn_models[me] is five35_playout.HARD
        for s, w in enumerate(drawn_models):
            seen[s].add(id(w))
    assert all(len(seen[s]) == (1 if s == me else 2) for s in range(4))


def test_the_search_plays_each_deal_with_the_models_drawn_for_it():
    # five35_pimc.evaluate draws the seats' models once per deal: the last deal's models are the
    # game's seat_weights afterwards, and a decision stays reproducible from its seed.
    _state, view = _view_after_leads(5)
    settings_ = engine.ai.HardSettings(five35_reading=five35_style.Reading(plain=1.0))
    moves = {choose_move(view, level="hard", seed=s, iterations=30, settings=settings_) for s in range(3)}
    again = {choose_move(view, level="hard", seed=s, iterations=30, settings=settings_) for s in range(3)}
    assert moves == again
    assert moves <= set(view["legal_moves"])
    game = game_for(view, random.Random(3), heuristic_playouts=True)
    assert isinstance(game, Five35Game)
    game.seat_models = five35_style.seat_models(game.base, game.info.seat, five35_playout.HARD,
                                                five35_style.Reading(plain=1.0))
    five35_pimc.evaluate(game, five35_pimc.candidates(game, game.rules.legal(game.base)),
                         random.Random(4), iterations=5)
    assert game.seat_weights is not None and game.seat_weights[game.info.seat] is five35_playout.HARD


@settings(max_examples=60, deadline=None)
@given(evidence=st.tuples(*[st.integers(0, 6)] * 6))
def test_a_reading_with_other_searcher_shares_weighs_the_evidence_with_them(evidence):
    # the module's shares give the module's ratios (computed once); any other shares are weighed
    # the same way, so shares a hair away give the same odds
    near = five35_style.Reading(multi_early=five35_style.MULTI_SEARCHER_EARLY + 1e-12,
                                multi_late=five35_style.MULTI_SEARCHER_LATE + 1e-12,
                                odd_follow=five35_style.ODD_FOLLOW_SEARCHER + 1e-12)
    assert five35_style.searcher_log_odds(evidence, near) == pytest.approx(
        five35_style.searcher_log_odds(evidence), abs=1e-6)


def test_the_pooled_shares_make_set_leads_and_fitting_follows_weaker_medium_evidence():
    pooled, now = five35_style.POOLED, five35_style.READING
    for i in (1, 3, 4):  # an early or late set lead, a fitting follow: less medium than before
        ev = tuple(int(j == i) for j in range(6))
        assert now.prior > _odds(*ev, reading=pooled) > _odds(*ev, reading=now)
    assert _odds(0, 0, 0, 0, 0, 1, reading=pooled) > 3  # an odd follow is as decisive
    assert _odds(1, 0, reading=pooled) > 2  # and so is an early single lead
    assert _odds(0, 3, 0, 0, 2, 0, reading=pooled) < 0  # a medium seat's usual round reads medium
