"""engine.ai.cinquillo_sample: every determinization satisfies every constraint, even tight ones."""

from __future__ import annotations

import random

import pytest
from ai_positions import CONFIGS, position
from hypothesis import given, settings
from hypothesis import strategies as st

import engine
from engine.ai.cinquillo_sample import CinquilloDeterminizer, CinquilloSampler
from engine.ai.infoset import CinquilloInfo, info_from_view

CINQ = [c for c in CONFIGS if c[0] == "cinquillo"]


def _check(info: CinquilloInfo, hands: list[int]) -> None:
    union = 0
    for s, h in enumerate(hands):
        assert union & h == 0, "a card dealt twice"
        union |= h
        assert h.bit_count() == info.sizes[s]
        if s == info.seat:
            assert h == info.hand
        else:
            assert h & ~info.unseen == 0, "a card the seat has seen (played, or its own) was dealt"
            assert h & info.voids[s] == 0, "a pass void broken"
            assert info.musts[s] & ~h == 0
    assert union == info.unseen | info.hand


@settings(max_examples=50, deadline=None)
@given(config=st.sampled_from(CINQ), seed=st.integers(0, 2**32), steps=st.integers(0, 90))
def test_samples_satisfy_the_constraints(config, seed, steps):  # C-5, C-11
    state = position(config, seed, steps)
    seat = engine.to_move(state)
    view = engine.view(state, seat)
    info = info_from_view(view)
    assert isinstance(info, CinquilloInfo)
    sampler = CinquilloSampler(info)
    rng = random.Random(seed)
    for _ in range(50):
        _check(info, sampler.hands(rng))
    det = CinquilloDeterminizer(view, info, rng, pool=20)
    for _ in range(10):
        st_ = det.sample(rng)
        _check(info, st_.hands)
        assert engine.rules_for(st_).legal(st_) == engine.rules_for(state).legal(state)


def _tight_info() -> CinquilloInfo:
    """Seat 0 sees 12 unseen cards for seats 1-3 (4 each) with overlapping voids that leave exactly
    few deals: greedy dealing can get stuck, the exact deal cannot."""
    unseen = sum(1 << c for c in range(12))
    a, b, c = (sum(1 << x for x in range(0, 4)), sum(1 << x for x in range(4, 8)),
               sum(1 << x for x in range(8, 12)))
    # seat 1 may only hold a's cards or b's, seat 2 only b's or c's, seat 3 only a's or c's
    voids = (0, c, a, b)
    return CinquilloInfo(seat=0, players=4, hand=1 << 20, sizes=(1, 4, 4, 4),
                         unseen=unseen, voids=voids, musts=(0, 0, 0, 0))


def test_tight_constraints_always_succeed():
    info = _tight_info()
    sampler = CinquilloSampler(info)
    rng = random.Random(0)
    seen = set()
    for _ in range(300):
        hands = sampler.hands(rng)
        _check(info, hands)
        seen.add(tuple(hands))
    assert len(seen) > 10  # it samples, it does not return one fixed deal


def test_exact_deal_alone():
    info = _tight_info()
    sampler = CinquilloSampler(info)
    rng = random.Random(1)
    for _ in range(50):
        hands = [0, 0, 0, 0]
        hands[0] = info.hand
        room = sampler._exact(hands, rng)
        sampler._deal_free(hands, room, rng)
        _check(info, hands)


def test_contradictions_are_refused():
    info = _tight_info()
    bad = CinquilloInfo(seat=0, players=4, hand=info.hand, sizes=info.sizes, unseen=info.unseen,
                        voids=(0, info.unseen, info.unseen, info.unseen), musts=(0, 0, 0, 0))
    with pytest.raises(ValueError):
        CinquilloSampler(bad)


def test_a_plain_share_of_the_samples_ignores_the_weighted_pool():
    # Issue 38's robust play: with ``plain`` 1 every sample is a fresh constrained deal (the pool
    # is still drawn, so the seat's other random choices do not move), with 0 every one comes from
    # the pool; both satisfy every constraint.
    config = next(c for c in CINQ if c[1] == 4)  # with 2 seats the other hand is known
    state = position(config, 11, 12)
    view = engine.view(state, engine.to_move(state))
    info = info_from_view(view)
    assert isinstance(info, CinquilloInfo)
    pooled = CinquilloDeterminizer(view, info, random.Random(1), pool=20)
    plain = CinquilloDeterminizer(view, info, random.Random(1), pool=20, plain=1.0)
    assert pooled.deals and pooled.deals == plain.deals
    rng = random.Random(2)
    from_pool = [pooled.sample(rng).hands for _ in range(30)]
    fresh = [plain.sample(rng).hands for _ in range(30)]
    assert all(h in pooled.deals for h in from_pool)
    assert sum(h not in plain.deals for h in fresh) >= 25
    for h in fresh:
        _check(info, h)
