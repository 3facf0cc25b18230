"""engine.ai.belief_weights: deal weights are tempered so that a few deals cannot take all the mass."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.ai import belief_weights as bw


def _ess(cum):
    w = [b - a for a, b in zip([0.0, *cum], cum, strict=False)]
    return sum(w) ** 2 / sum(x * x for x in w)


def test_even_likelihoods_are_left_as_they_are():
    assert bw.tempering([-3.0] * 10) == 1.0
    assert bw.cumulative_weights([-3.0] * 4) == [1.0, 2.0, 3.0, 4.0]


def test_one_dominant_deal_is_tempered_down():
    logs = [0.0] + [-40.0] * 19
    t = bw.tempering(logs)
    assert 0.0 < t < 0.1
    assert _ess(bw.cumulative_weights(logs)) >= bw.MIN_ESS_SHARE * 20 * 0.99


@settings(max_examples=50, deadline=None)
@given(logs=st.lists(st.floats(-200.0, 0.0), min_size=1, max_size=60))
def test_the_effective_sample_size_stays_above_the_floor_and_order_is_kept(logs):
    cum = bw.cumulative_weights(logs)
    assert len(cum) == len(logs)
    assert all(b >= a for a, b in itertools.pairwise(cum))
    assert _ess(cum) >= bw.MIN_ESS_SHARE * len(logs) * 0.99
    w = [b - a for a, b in zip([0.0, *cum], cum, strict=False)]
    best = max(range(len(logs)), key=lambda i: logs[i])
    assert w[best] >= max(w) - 1e-9  # a likelier deal never weighs less
