"""engine.ai.five35_belief: weighting 535 deals by the others' moves.  It winds a deal back to its
round's start exactly, its move probabilities are a distribution, the deal that was really dealt
explains medium players' moves better than fair deals do, and a search that weighs its deals sees
only the seat's view (G-1)."""

from __future__ import annotations

import math
import random

import pytest
from ai_positions import CONFIGS, position
from hypothesis import given, settings
from hypothesis import strategies as st
from test_ai_five35_pimc import assert_in_budget_and_blind

import engine
from engine.ai import choose_move, five35_belief, five35_pimc, five35_playout
from engine.ai.games import Five35Game, game_for
from engine.ai.hard import HardSettings
from engine.five35.piles import NCARDS, PASS

F535 = [c for c in CONFIGS if c[0] == "535"]
RULES = engine.rules_for("535")


def _game(state, seed=1) -> Five35Game:
    game = game_for(engine.view(state, engine.to_move(state)), random.Random(seed), heuristic_playouts=True)
    assert isinstance(game, Five35Game)
    return game


@settings(max_examples=40, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(0, 120))
def test_a_deal_wound_back_to_the_round_start_replays_to_itself(config, seed, steps):  # F-8, F-9, F-10
    state = position(config, seed, steps)
    game = _game(state, seed)
    deal = game.sample(random.Random(seed))
    start = five35_belief.round_start(deal)
    assert start.history == [] and start.pile == 0 and start.played == 0
    assert sum(start.counts) == sum(deal.counts) + sum(NCARDS[h >> 3] for h in deal.history)
    for h in deal.history:
        assert start.to_move == h & 7  # the same seat moves at every step (F-11)
        RULES.apply(start, h >> 3)
    assert (start.hands, start.counts, start.pile, start.to_move, start.passed, start.played) == (
        deal.hands, deal.counts, deal.pile, deal.to_move, deal.passed, deal.played)


@settings(max_examples=40, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(0, 80),
       beta=st.sampled_from([0.3, 1.0, 4.0]), name=st.sampled_from(["MEDIUM", "STRONG"]))
def test_the_move_probabilities_of_a_decision_sum_to_one(config, seed, steps, beta, name):  # F-7, F-8
    state = position(config, seed, steps)
    base = _game(state, seed).base
    legal = RULES.legal(base)
    w = getattr(five35_playout, name)
    probs = [math.exp(five35_belief.log_prob(base, m, w, beta)) for m in legal]
    out = any(m != PASS and NCARDS[m] == base.counts[base.to_move] for m in legal)
    if out or len(legal) < 2:  # going out, or a single option: no choice, nothing learnt
        assert all(p == 1.0 for p in probs)
    else:
        assert sum(probs) == pytest.approx(1.0)
        assert all(0.0 < p < 1.0 for p in probs)
    if base.pile == 0:
        assert PASS not in legal  # the leader may not pass (F-7): no pass in the softmax


def test_the_real_deal_explains_medium_players_better_than_fair_deals():  # F-8
    rng = random.Random(5)
    beaten = total = 0
    for seed in range(30):
        state = engine.new_game("535", players=4, seed=seed, target=1)
        for _ in range(rng.randrange(8, 24)):
            view = engine.view(state, engine.to_move(state))
            state = engine.play(state, choose_move(view, level="medium", seed=rng.randrange(10**6)))
            if engine.result(state) is not None:
                break
        if engine.result(state) is not None:
            continue
        seat = engine.to_move(state)
        game = _game(state)
        true = game.base.clone()
        true.hands = state.hands[:]
        models = (five35_playout.MEDIUM,) * 4
        real = five35_belief.log_likelihood(true, seat, models, 1.0)
        for _ in range(20):
            total += 1
            beaten += real > five35_belief.log_likelihood(game.sample(rng), seat, models, 1.0)
    assert total >= 200
    assert beaten / total > 0.8  # measured 0.97; fair deals would be beaten about half the time


def test_a_weighing_search_stays_in_its_budget_and_sees_only_the_view():  # G-1
    assert_in_budget_and_blind(_weighable(F535[2], 12), HardSettings(five35_belief=1.0))


def _weighable(config, steps):
    """A position with three moves or more, after other seats have moved this round."""
    for seed in range(100):
        state = position(config, seed, steps)
        game = _game(state)
        if (len(game.rules.legal(game.base)) >= 3
                and any(h & 7 != game.base.to_move for h in game.base.history)):
            return state
    raise AssertionError("no such position")


def test_weighing_changes_the_means_but_not_the_deals_counted():
    game = _game(_weighable(F535[2], 12))
    assert any(h & 7 != game.base.to_move for h in game.base.history)
    moves = five35_pimc.candidates(game, game.rules.legal(game.base))
    plain = five35_pimc.evaluate(game, moves, random.Random(2), iterations=60)
    game.belief_beta = 1.0
    weighed = five35_pimc.evaluate(game, moves, random.Random(2), iterations=60)
    assert {m: n for m, (n, _) in plain.items()} == {m: n for m, (n, _) in weighed.items()}
    assert plain != weighed  # the same deals and playouts, other weights
    for n, total in weighed.values():
        assert 0.0 <= total <= n + 1e-9
