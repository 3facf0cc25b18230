"""engine.ai.cinquillo_belief: deals are weighted by how well they explain the others' moves."""

from __future__ import annotations

import random

from ai_positions import CONFIGS, position

import engine
from engine.ai.cinquillo_belief import log_likelihood
from engine.ai.cinquillo_sample import CinquilloSampler
from engine.ai.infoset import cinquillo_history, info_from_view


def test_likelihoods_are_log_probabilities():
    for seed in range(5):
        state = position(CONFIGS[2], seed, 20)
        view = engine.view(state, engine.to_move(state))
        info = info_from_view(view)
        history = cinquillo_history(view)
        sampler = CinquilloSampler(info)
        rng = random.Random(seed)
        for _ in range(20):
            lg = log_likelihood(info, history, sampler.hands(rng), False, False)
            assert lg <= 1e-9


def test_no_choice_seen_means_no_information():
    state = engine.new_game("cinquillo", players=4, seed=2, preset="clasico")
    state = engine.play(state, "5o")  # a forced move: it says nothing about the hands
    view = engine.view(state, engine.to_move(state))
    info = info_from_view(view)
    hands = CinquilloSampler(info).hands(random.Random(0))
    assert log_likelihood(info, cinquillo_history(view), hands, False, False) == 0.0
