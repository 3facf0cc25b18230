"""Turning deals' log-likelihoods into sampling weights without letting a few deals take over.

A round's history holds a dozen or more choices by the other seats, so the log-likelihood of a
deal (a sum over them) spreads over tens of units across a pool of deals: raw weights put nearly
all the mass on one or two deals, and a search that plays out only those overfits their hidden
cards.  So the likelihoods are *tempered*: raised to the largest power ``t`` in [0, 1] for which the
effective sample size, ``(sum w)^2 / sum w^2``, stays at least :data:`MIN_ESS_SHARE` of the pool.
``t = 1`` is the plain weighting, ``t = 0`` uniform deals.
"""

from __future__ import annotations

import math

#: the effective sample size kept, as a share of the pool
MIN_ESS_SHARE = 0.25
#: bisection steps on the tempering power
STEPS = 12


def _ess(logs: list[float], t: float, top: float) -> float:
    s1 = s2 = 0.0
    for x in logs:
        w = math.exp(t * (x - top))
        s1 += w
        s2 += w * w
    return s1 * s1 / s2


def tempering(logs: list[float], min_share: float = MIN_ESS_SHARE) -> float:
    """The power ``t`` in [0, 1] applied to the likelihoods (see the module docstring)."""
    if not logs:
        return 1.0
    top = max(logs)
    need = min_share * len(logs)
    if _ess(logs, 1.0, top) >= need:
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(STEPS):
        mid = (lo + hi) / 2
        if _ess(logs, mid, top) >= need:
            lo = mid
        else:
            hi = mid
    return lo


def tempered_weights(logs: list[float], min_share: float = MIN_ESS_SHARE) -> list[float]:
    """The deals' tempered weights (see the module docstring), the likeliest deal's 1."""
    t = tempering(logs, min_share)
    top = max(logs)
    return [math.exp(t * (x - top)) for x in logs]


def cumulative_weights(logs: list[float], min_share: float = MIN_ESS_SHARE) -> list[float]:
    """Cumulative tempered weights of the deals (for ``random.choices(cum_weights=...)``)."""
    acc, out = 0.0, []
    for w in tempered_weights(logs, min_share):
        acc += w
        out.append(acc)
    return out
