"""One seat's information set of a game, ready to play: determinizer, round scoring, policies.

:func:`game_for` reads a seat's view and returns a :class:`CinquilloGame` or a
:class:`Five35Game`: ``base`` is a state rebuilt from the view (own hand and the public table are
true; the other hands are one determinization), ``sample`` draws fresh determinizations, and
``over``/``rewards``/``rollout`` are what :mod:`engine.ai.ismcts` needs; ``medium`` is the
medium player's move in ``base``.
"""

from __future__ import annotations

import random
from typing import Any, cast

from engine.ai import cinquillo_belief, five35_playout, five35_style, medium_cinquillo, medium_five35
from engine.ai.cinquillo_sample import CinquilloDeterminizer
from engine.ai.five35_sample import Five35Determinizer
from engine.ai.infoset import CinquilloInfo, Five35Info, info_from_view
from engine.ai.outcome import CinquilloOutcome, Five35Outcome
from engine.cinquillo.cards import PASS, cards_of
from engine.cinquillo.game import CinquilloRules
from engine.cinquillo.state import CinquilloState
from engine.five35.cards import GUARD
from engine.five35.game import Five35Rules
from engine.five35.piles import PASS as PASS_535
from engine.five35.state import State as Five35State
from engine.rules import rules_for

# typed references to the registered rules (rules_for returns the protocol): the compiled search
# then calls their methods directly
_CINQUILLO = cast(CinquilloRules, rules_for("cinquillo"))
_FIVE35 = cast(Five35Rules, rules_for("535"))


class CinquilloGame:
    """A Cinquillo seat's information set (see the module docstring)."""

    #: with heuristic playouts, the share of choices made at random instead (keeps playouts varied)
    EPSILON = 0.0

    def __init__(self, view: dict[str, Any], info: CinquilloInfo, rng: random.Random,
                 heuristic_playouts: bool, belief_pool: int = 0,
                 belief_beta: float = cinquillo_belief.BETA, belief_plain: float = 0.0) -> None:
        self.rules: CinquilloRules = _CINQUILLO
        self.info = info
        self.det = CinquilloDeterminizer(view, info, rng, belief_pool, belief_beta, belief_plain)
        self.base = self.det.base
        self.outcome = CinquilloOutcome(view)
        self.heuristic_playouts = heuristic_playouts

    def sample(self, rng: random.Random) -> CinquilloState:
        """A fresh determinization."""
        return self.det.sample(rng)

    def over(self, st: CinquilloState) -> bool:
        """True once the round has ended."""
        return self.outcome.over(st)

    def rewards(self, st: CinquilloState) -> list[float]:
        """The round's rewards per seat."""
        return self.outcome.rewards(st)

    def rollout(self, st: CinquilloState, rng: random.Random) -> None:
        """Play the round out in place: the medium player's moves with ``heuristic_playouts``, else
        uniformly random ones (legal moves read straight from the hand and ``playable`` masks)."""
        rules = self.rules  # a method called on it is a direct call when compiled (not a bound one)
        heuristic = self.heuristic_playouts
        eps = self.EPSILON
        while st.turn >= 0 and not st.rounds:
            m = st.hands[st.turn] & st.playable
            if not m:
                rules.apply(st, PASS)
                continue
            k = m.bit_count()
            if k > 1:
                if heuristic and (not eps or rng.random() >= eps):
                    rules.apply(st, medium_cinquillo.choose(st, cards_of(m), rng))
                    continue
                for _ in range(rng.randrange(k)):
                    m &= m - 1
            rules.apply(st, (m & -m).bit_length() - 1)

    def medium(self, rng: random.Random) -> int:
        """The medium player's move in the base state (it reads only the own hand and the table)."""
        return medium_cinquillo.choose(self.base, self.rules.legal(self.base), rng)


class Five35Game:
    """A 535 seat's information set (see the module docstring)."""

    def __init__(self, view: dict[str, Any], info: Five35Info, rng: random.Random,
                 heuristic_playouts: bool,
                 weights: five35_playout.Weights = five35_playout.MEDIUM,
                 seat_weights: tuple[five35_playout.Weights, ...] | None = None) -> None:
        self.rules: Five35Rules = _FIVE35
        self.weights = weights
        self.seat_weights = seat_weights
        #: when set, the search draws ``seat_weights`` afresh for each deal (the robust reading)
        self.seat_models: five35_style.SeatModels | None = None
        #: > 0: the search weighs each deal by the others' moves under these models at this inverse
        #: temperature (:mod:`engine.ai.five35_belief`); 0: every deal alike
        self.belief_beta = 0.0
        #: when set, the search also plays every move of each deal out with these models of the
        #: seats (safe play: :func:`engine.ai.five35_pimc.choose`'s ``safe``)
        self.plain_weights: tuple[five35_playout.Weights, ...] | None = None
        #: > 0: from this many cards left in all hands, the search plays each deal's end exactly
        #: (:mod:`engine.ai.five35_endgame`, up to ``endgame_nodes`` positions a deal); 0: never
        self.endgame_cards = 0
        self.endgame_nodes = 4000
        #: whether only the own seat searches the end (the others play their models), not every seat
        self.endgame_own = False
        self.info = info
        self.det = Five35Determinizer(view, info, rng)
        self.base = self.det.base
        self.outcome = Five35Outcome(view)
        self.heuristic_playouts = heuristic_playouts

    def sample(self, rng: random.Random) -> Five35State:
        """A fresh determinization."""
        return self.det.sample(rng)

    def over(self, st: Five35State) -> bool:
        """True once the round has ended."""
        return self.outcome.over(st)

    def rewards(self, st: Five35State) -> list[float]:
        """The round's rewards per seat."""
        return self.outcome.rewards(st)

    def rollout(self, st: Five35State, rng: random.Random) -> None:
        """Play the round out in place: with ``heuristic_playouts``, the moves of the policy of
        weights ``weights`` (:mod:`engine.ai.five35_playout`; by default the medium player's), or
        per seat ``seat_weights`` if given (:mod:`engine.ai.five35_style`), else uniformly random
        legal ones (read from the engine's per-pile candidate table, which is
        what ``legal`` does, without its memo: playout hands rarely repeat)."""
        if self.heuristic_playouts:
            five35_playout.rollout(st, rng.getrandbits(30), self.weights, self.seat_weights)
            return
        apply = self.rules.apply
        cands = st.tables.cands
        guard = GUARD
        while not st.over and not st.rounds:
            h = st.hands[st.to_move] | guard
            moves = [m for m, r in cands[st.pile] if (h - r) & guard == guard]
            if st.pile:
                moves.append(PASS_535)
            apply(st, moves[rng.randrange(len(moves))] if len(moves) > 1 else moves[0])

    def playout(self, st: Five35State, seed: int) -> None:
        """:meth:`rollout` from a seed (0..2**30-1): the heuristic playout then needs no
        ``random.Random``, whose seeding cost as much as half a compiled playout."""
        if self.heuristic_playouts:
            five35_playout.rollout(st, seed, self.weights, self.seat_weights)
        else:
            self.rollout(st, random.Random(seed))

    def medium(self, rng: random.Random) -> int:
        """The medium player's move in the base state (it reads only the own hand and the table)."""
        return medium_five35.choose(self.base, self.rules.legal(self.base), rng)


def game_for(view: dict[str, Any], rng: random.Random, *, heuristic_playouts: bool = False,
             belief_pool: int = 0, belief_beta: float = cinquillo_belief.BETA, belief_plain: float = 0.0,
             weights: five35_playout.Weights = five35_playout.MEDIUM,
             seat_weights: tuple[five35_playout.Weights, ...] | None = None) -> CinquilloGame | Five35Game:
    """The information set of the view's seat as a searchable game (``belief_pool``,
    ``belief_beta`` and ``belief_plain``, Cinquillo only: see
    :class:`engine.ai.cinquillo_sample.CinquilloDeterminizer`;
    the playouts' ``weights``,
    or per seat ``seat_weights``, 535 only)."""
    info = info_from_view(view)
    if isinstance(info, CinquilloInfo):
        return CinquilloGame(view, info, rng, heuristic_playouts, belief_pool, belief_beta, belief_plain)
    return Five35Game(view, info, rng, heuristic_playouts, weights, seat_weights)
