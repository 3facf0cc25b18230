"""engine.ai.five35_sample: determinizations deal only unseen cards, with the public hand sizes."""

from __future__ import annotations

import random

from ai_positions import CONFIGS, position
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.ai.five35_sample import Five35Determinizer, Five35Sampler
from engine.ai.infoset import Five35Info, info_from_view
from engine.five35 import cards as D
from engine.five35.state import check_conservation

F535 = [c for c in CONFIGS if c[0] == "535"]


@settings(max_examples=40, deadline=None)
@given(config=st.sampled_from(F535), seed=st.integers(0, 2**32), steps=st.integers(0, 150))
def test_samples_satisfy_the_constraints(config, seed, steps):
    state = position(config, seed, steps)
    seat = engine.to_move(state)
    view = engine.view(state, seat)
    info = info_from_view(view)
    assert isinstance(info, Five35Info)
    sampler = Five35Sampler(info)
    rng = random.Random(seed)
    for _ in range(50):
        hands = sampler.hands(rng)
        assert hands[seat] == state.hands[seat]
        assert [D.size(h) for h in hands] == state.counts
        others = sum(h for s, h in enumerate(hands) if s != seat)
        assert D.holds(info.unseen, others), "a played or own card was dealt"
    det = Five35Determinizer(view, info, rng)
    for _ in range(10):
        st_ = det.sample(rng)
        assert check_conservation(st_)
        assert D.size(st_.out) == info.out_count
        assert st_.played == state.played
        rules = engine.rules_for(st_)
        assert rules.legal(st_) == rules.legal(state)


def test_every_unseen_card_is_equally_likely_in_every_hidden_seat():
    """The sampler's own shuffle is uniform: each unseen card lands in a hidden hand in proportion
    to that hand's size, and in the out-of-play pile in proportion to its size (a biased shuffle,
    e.g. one that never leaves a card in place, skews the first or the last cards of the pool)."""
    state = engine.new_game("535", players=4, seed=3, target=1)
    seat = engine.to_move(state)
    info = info_from_view(engine.view(state, seat))
    assert isinstance(info, Five35Info)
    sampler = Five35Sampler(info)
    draws = 6000
    others = [s for s in range(4) if s != seat]
    # how often the pool's first and last cards (by rank: the lowest and the highest unseen rank)
    # go to each hidden seat
    low, high = min(sampler.pool), max(sampler.pool)
    seen = {(r, s): 0 for r in (low, high) for s in others}
    rng = random.Random(11)
    for _ in range(draws):
        hands = sampler.hands(rng)
        for r in (low, high):
            for s in others:
                seen[(r, s)] += D.counts(hands[s])[D.RANK_INDEX[r]]
    total = len(sampler.pool)
    for r in (low, high):
        copies = sampler.pool.count(r)
        for s in others:
            p = info.sizes[s] / total
            expected = draws * copies * p
            sd = (draws * copies * p * (1 - p)) ** 0.5
            assert abs(seen[(r, s)] - expected) < 5 * sd, (r, s, seen[(r, s)], expected)
