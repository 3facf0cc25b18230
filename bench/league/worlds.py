"""What the league's searchers search: a seat's view turned into fair determinizations and rewards.

A *world* is one seat's information set, ready to play out: ``base`` is a state rebuilt from the
view, ``sample`` deals the unseen cards afresh (uniformly among the deals that fit everything the
seat saw: the public hand sizes, and in Cinquillo the cards a pass proved a seat lacks, C-5, C-11,
and the 5 de oros's holder, C-3; ``engine.ai.infoset`` reads those facts from the view), and
``rewards`` scores a finished round per seat.  The opponents share these facts and the engine's
rules, nothing of how the engine's own players search or play out.

Rewards: Cinquillo, the seat's share of the round's win (partners share a team's win, C-12); 535,
the share of the match win when the round ends the match (F-14), else the seat's standing after the
round between the best (1) and the worst (0) score, so a seat that cannot go out still sheds points.
"""

from __future__ import annotations

import random
from typing import Any

from engine.ai.cinquillo_sample import CinquilloSampler
from engine.ai.cinquillo_sample import base_state as cinquillo_base
from engine.ai.five35_sample import base_state as five35_base
from engine.ai.infoset import CinquilloInfo, Five35Info, info_from_view
from engine.cinquillo.state import CinquilloState
from engine.five35 import cards as D
from engine.five35.state import State as Five35State
from engine.rules import rules_for

#: rejection tries before a Cinquillo deal is drawn by the engine's constrained sampler instead
REJECTION_TRIES = 60


class Five35World:
    """A 535 seat's information set (see the module docstring)."""

    def __init__(self, view: dict[str, Any], rng: random.Random) -> None:
        info = info_from_view(view)
        assert isinstance(info, Five35Info)
        self.info = info
        self.rules = rules_for("535")
        self.seat = info.seat
        self.pool = [i for i in range(D.NRANKS) for _ in range((info.unseen >> (4 * i)) & 15)]
        self.others = [s for s in range(info.players) if s != info.seat]
        self.deck = D.deck_packed(info.players)
        self.base: Five35State = five35_base(view, self._hands(rng))
        self.scores = [int(x) for x in view["scores"]]
        self.target = int(view["options"]["target"])

    def _hands(self, rng: random.Random) -> list[int]:
        pool = self.pool[:]
        rng.shuffle(pool)
        hands = [0] * self.info.players
        hands[self.seat] = self.info.hand
        at = 0
        for s in self.others:
            n = self.info.sizes[s]
            for i in pool[at:at + n]:
                hands[s] += D.UNIT[i]
            at += n
        return hands

    def sample(self, rng: random.Random) -> Five35State:
        """A fresh determinization (a copy of the base state with newly dealt hidden hands)."""
        st = self.base.clone()
        st.hands = self._hands(rng)
        st.out = self.deck - sum(st.hands) - st.played
        return st

    @staticmethod
    def over(st: Five35State) -> bool:
        """Whether the searched round has ended."""
        return st.over or bool(st.rounds)

    def rewards(self, st: Five35State) -> list[float]:
        """Per seat, the match-win share or the standing (see the module docstring)."""
        pts = st.rounds[0]["points"]
        new = [a + b for a, b in zip(self.scores, pts, strict=True)]
        lo, hi = min(new), max(new)
        if hi >= self.target:
            k = new.count(lo)
            return [1.0 / k if v == lo else 0.0 for v in new]
        if hi == lo:
            return [0.5] * len(new)
        return [(hi - v) / (hi - lo) for v in new]


class CinquilloWorld:
    """A Cinquillo seat's information set (see the module docstring)."""

    def __init__(self, view: dict[str, Any], rng: random.Random) -> None:
        info = info_from_view(view)
        assert isinstance(info, CinquilloInfo)
        self.info = info
        self.rules = rules_for("cinquillo")
        self.seat = info.seat
        self.teams = bool(view["options"]["teams"])
        self.others = [s for s in range(info.players) if s != info.seat]
        musts = 0
        for m in info.musts:
            musts |= m
        self.pool = [c for c in range(40) if (info.unseen & ~musts) >> c & 1]
        self.room = [info.sizes[s] - info.musts[s].bit_count() for s in range(info.players)]
        self.constrained = any(info.voids)
        self.fallback: CinquilloSampler | None = None
        self.base: CinquilloState = cinquillo_base(view, self._hands(rng))

    def _hands(self, rng: random.Random) -> list[int]:
        """Shuffle the unseen cards into the hands, again until no seat holds a card it cannot
        (rejection keeps the deal exactly uniform); the engine's sampler after many tries."""
        info = self.info
        for _ in range(REJECTION_TRIES if self.constrained else 1):
            pool = self.pool[:]
            rng.shuffle(pool)
            hands = list(info.musts)
            hands[self.seat] = info.hand
            at = 0
            ok = True
            for s in self.others:
                h = hands[s]
                for c in pool[at:at + self.room[s]]:
                    h |= 1 << c
                at += self.room[s]
                if h & info.voids[s]:
                    ok = False
                    break
                hands[s] = h
            if ok:
                return hands
        if self.fallback is None:
            self.fallback = CinquilloSampler(info)
        return self.fallback.hands(rng)

    def sample(self, rng: random.Random) -> CinquilloState:
        """A fresh determinization."""
        st = self.base.clone()
        st.hands = self._hands(rng)
        return st

    @staticmethod
    def over(st: CinquilloState) -> bool:
        """Whether the searched round has ended."""
        return st.turn < 0 or bool(st.rounds)

    def rewards(self, st: CinquilloState) -> list[float]:
        """Per seat, its share of the round's win (a whole win for both partners, C-12)."""
        winners = st.rounds[0]["winners"]
        share = 1.0 if self.teams else 1.0 / len(winners)
        out = [0.0] * st.players
        for w in winners:
            out[w] = share
        return out


def world_for(view: dict[str, Any], rng: random.Random) -> Five35World | CinquilloWorld:
    """The world of the view's seat."""
    return Five35World(view, rng) if view["game"] == "535" else CinquilloWorld(view, rng)
