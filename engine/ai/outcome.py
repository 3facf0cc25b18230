"""How a search scores the end of a round, per seat, in [0, 1].

Searches play to the end of the *round* only (the next deal is unknown and far away), so a round
is scored by what it means for the match:

* Cinquillo: the seat's share of the round win (C-7; 1/k when k seats share it in a cabrón
  blocked end, C-13; with teams both partners score 1, C-12).  Winning the round is what gains
  round wins or points, and in points matches the winner's margin follows from going out early.
* 535: if the round ends the match (a score reaches the target, F-14), the share of the match
  win; otherwise the seat's standing in the new scores, 1 for the lowest and 0 for the highest
  (lower is better in 535), so a seat that cannot go out still learns to shed its costly cards.

The searched states are built so that the fast path stops when the round ends (see
``search_options`` in the samplers); ``over`` also accepts a state that went on to a new deal.
"""

from __future__ import annotations

from typing import Any

from engine.cinquillo.state import CinquilloState
from engine.five35.state import State as Five35State


class CinquilloOutcome:
    """Round-end test and rewards for Cinquillo searches."""

    #: weight of the cards shed (a shaped, lower-variance signal) beside the win share
    SHED_WEIGHT = 0.0

    def __init__(self, view: dict[str, Any]) -> None:
        self.teams = bool(view["options"]["teams"])
        self.sizes = [int(x) for x in view["hand_sizes"]]

    @staticmethod
    def over(st: CinquilloState) -> bool:
        """True once the searched round has ended."""
        return st.turn < 0 or bool(st.rounds)

    def rewards(self, st: CinquilloState) -> list[float]:
        """Per seat, the share of the round's win."""
        winners = st.rounds[0]["winners"]
        share = 1.0 if self.teams else 1.0 / len(winners)
        out = [0.0] * st.players
        for w in winners:
            out[w] = share
        k = self.SHED_WEIGHT
        if k:
            left = st.rounds[0]["cards_left"]
            out = [(1 - k) * r + k * (1 - left[i] / max(1, self.sizes[i])) for i, r in enumerate(out)]
        return out


class Five35Outcome:
    """Round-end test and rewards for 535 searches (needs the real scores and target)."""

    def __init__(self, view: dict[str, Any], shaping: float = 0.0) -> None:
        self.scores = [int(x) for x in view["scores"]]
        self.target = int(view["options"]["target"])
        #: a seat that loses the match still scores this share of its standing (0: nothing)
        self.shaping = shaping

    @staticmethod
    def over(st: Five35State) -> bool:
        """True once the searched round has ended."""
        return st.over or bool(st.rounds)

    def rewards(self, st: Five35State) -> list[float]:
        """Per seat: the share of the match win if the round ends it (a loser: ``shaping`` times
        its standing), else the standing."""
        # index loops on typed lists, not zip/min/max: this runs once a playout, and the
        # compiled code calls those builtins generically (a tenth of a playout, callgrind)
        points: list[int] = st.rounds[0]["points"]
        scores = self.scores
        n = len(scores)
        new = [0] * n
        lo = hi = scores[0] + points[0]
        for i in range(n):
            v = scores[i] + points[i]
            new[i] = v
            if v < lo:
                lo = v
            if v > hi:
                hi = v
        out = [0.0] * n
        if hi >= self.target:
            winners = 0
            for v in new:
                if v == lo:
                    winners += 1
            shaping = self.shaping
            for i in range(n):
                if new[i] == lo:
                    out[i] = 1.0 / winners
                elif shaping > 0.0:
                    out[i] = shaping * (hi - new[i]) / (hi - lo)
            return out
        if hi == lo:
            return [0.5] * n
        for i in range(n):
            out[i] = (hi - new[i]) / (hi - lo)
        return out
