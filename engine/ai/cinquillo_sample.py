"""Cinquillo determinizations: hidden hands drawn to fit every constraint of a seat's information set.

A determinization gives each other seat exactly its public number of cards, only unseen cards,
none of the cards its passes proved it lacks (``voids``) and the cards it provably holds
(``musts``).  Rejection sampling of whole deals fails often once a few seats have passed, so the
deal is *constrained*: the cards that fewest seats may hold are dealt first, each to an allowed
seat chosen with probability proportional to the room left in its hand.  That greedy deal almost
never gets stuck; when it does a few times, an exact deal that checks Hall's condition before each
card (no set of seats is left with more forced cards than room) takes over, so sampling always
succeeds when the constraints can be met at all.
"""

from __future__ import annotations

import random
from typing import Any

from engine.ai import belief_weights
from engine.ai.cinquillo_belief import BETA, log_likelihood
from engine.ai.infoset import CinquilloInfo, cinquillo_history, cinquillo_table
from engine.cinquillo.cards import PASS, cards_of, codes_of
from engine.cinquillo.snapshot import VERSION
from engine.cinquillo.state import CinquilloState
from engine.rules import rules_for

#: greedy attempts before the exact (Hall-checked) deal takes over
GREEDY_TRIES = 8


class CinquilloSampler:
    """Draws hidden hands for one information set (the per-card allowed seats are computed once)."""

    def __init__(self, info: CinquilloInfo) -> None:
        self.info = info
        n = info.players
        self.others = [s for s in range(n) if s != info.seat]
        musts = 0
        for m in info.musts:
            musts |= m
        self.pool_mask = info.unseen & ~musts
        self.room = [info.sizes[s] - info.musts[s].bit_count() if s != info.seat else 0 for s in range(n)]
        if sum(self.room) != self.pool_mask.bit_count() or min(self.room) < 0:
            raise ValueError("the hand sizes do not match the unseen cards")
        all_seats = sum(1 << s for s in self.others)
        # allowed[c]: bit mask of the seats that may hold card c
        self.free: list[int] = []
        self.constrained: list[tuple[int, int]] = []
        for c in cards_of(self.pool_mask):
            allowed = sum(1 << s for s in self.others if not info.voids[s] >> c & 1)
            if allowed == 0:
                raise ValueError(f"no seat can hold the card {c}: contradictory constraints")
            if allowed == all_seats:
                self.free.append(c)
            else:
                self.constrained.append((c, allowed))

    def hands(self, rng: random.Random) -> list[int]:
        """One draw: a hand mask per seat (the seat's own hand included), satisfying every constraint."""
        info = self.info
        hands = [m for m in info.musts]
        hands[info.seat] = info.hand
        if not self.constrained:
            self._deal_free(hands, self.room[:], rng)
            return hands
        for _ in range(GREEDY_TRIES):
            attempt = hands[:]
            room = self._greedy(attempt, rng)
            if room is not None:
                self._deal_free(attempt, room, rng)
                return attempt
        room = self._exact(hands, rng)
        self._deal_free(hands, room, rng)
        return hands

    def _deal_free(self, hands: list[int], room: list[int], rng: random.Random) -> None:
        """Deal the unconstrained cards uniformly into the room left (a shuffle cut in slices)."""
        cards = self.free[:]
        rng.shuffle(cards)
        at = 0
        for s in self.others:
            for c in cards[at:at + room[s]]:
                hands[s] |= 1 << c
            at += room[s]

    def _order(self, rng: random.Random) -> list[tuple[int, int]]:
        cards = self.constrained[:]
        rng.shuffle(cards)
        cards.sort(key=lambda ca: ca[1].bit_count())  # stable: random order within a size
        return cards

    def _greedy(self, hands: list[int], rng: random.Random) -> list[int] | None:
        room = self.room[:]
        for c, allowed in self._order(rng):
            seats = [s for s in self.others if allowed >> s & 1 and room[s] > 0]
            if not seats:
                return None
            s = _weighted(seats, room, rng)
            hands[s] |= 1 << c
            room[s] -= 1
        # the free cards can go anywhere, so any room left is fine
        return room

    def _exact(self, hands: list[int], rng: random.Random) -> list[int]:
        room = self.room[:]
        order = self._order(rng)
        for i, (c, allowed) in enumerate(order):
            rest = [a for _, a in order[i + 1:]]
            seats = [s for s in self.others if allowed >> s & 1 and room[s] > 0]
            rng.shuffle(seats)
            seats.sort(key=lambda s: -room[s])
            for s in seats:
                room[s] -= 1
                if _hall_ok(rest, room, self.others):
                    hands[s] |= 1 << c
                    break
                room[s] += 1
            else:
                raise ValueError("these constraints admit no deal")
        return room


def _weighted(seats: list[int], room: list[int], rng: random.Random) -> int:
    total = sum(room[s] for s in seats)
    x = rng.randrange(total)
    for s in seats:
        x -= room[s]
        if x < 0:
            return s
    return seats[-1]


def _hall_ok(allowed: list[int], room: list[int], others: list[int]) -> bool:
    """Can cards with these allowed-seat masks fit the room left?  Hall: every set of seats must have
    room for the cards that can only go to it."""
    by_mask: dict[int, int] = {}
    for a in allowed:
        by_mask[a] = by_mask.get(a, 0) + 1
    full = 0
    for s in others:
        full |= 1 << s
    sub = full
    while True:
        need = sum(k for a, k in by_mask.items() if a & ~sub == 0)
        space = sum(room[s] for s in others if sub >> s & 1)
        if need > space:
            return False
        if sub == 0:
            return True
        sub = (sub - 1) & full


def search_options(options: dict[str, Any]) -> dict[str, Any]:
    """The view's options changed so that the match ends with the current round (no next deal):
    a search evaluates one round, and this makes the fast path stop there."""
    opts = dict(options)
    if opts["points"]:
        opts["target"] = 1
    else:
        opts["rounds_to_win"] = 1
    return opts


def base_state(view: dict[str, Any], hands: list[int]) -> CinquilloState:
    """A state of the view's round with the given hands (one mask per seat), scores zeroed and the
    match ending with this round (:func:`search_options`).  Built through the engine's own
    ``restore`` so that every derived field comes from the engine."""
    n = int(view["players"])
    low, high, blocked = cinquillo_table(view)
    data = {
        "version": VERSION,
        "players": n,
        "seed": 0,  # never used: the search does not deal again
        "options": search_options(view["options"]),
        "hands": [codes_of(h) for h in hands],
        "low": low,
        "high": high,
        "blocked": codes_of(blocked),
        "turn": view["to_move"],
        "round_index": int(view["round"]) - 1,
        "dealer": view["dealer"] if view["dealer"] is not None else n - 1,
        "chips": view["chips"] if view["chips"] is not None else [0] * n,
        "pot": view["pot"] if view["pot"] is not None else 0,
        "scores": ["0"] * n,
        "round_wins": [0] * n,
        "history": [seat << 6 | move for seat, move in cinquillo_history(view)],
        "rounds": [],
        "winners": None,
    }
    state: CinquilloState = rules_for("cinquillo").restore(data)
    return state


class CinquilloDeterminizer:
    """Determinized states of a Cinquillo view: a base state built once, hands redrawn per sample.

    With ``pool`` > 0, ``pool`` deals are drawn up front and weighted by how well they explain the
    others' moves (:mod:`engine.ai.cinquillo_belief`); ``sample`` then draws among them in
    proportion to their weights (``beta``: :data:`engine.ai.cinquillo_belief.BETA`).  With ``pool``
    0 every sample is a fresh constrained deal.  ``plain`` (issue 38's robust play): the share of
    samples that are fresh constrained deals even with a pool, so that players who do not play
    like the model the weights assume still leave the search deals that fit them.
    """

    def __init__(self, view: dict[str, Any], info: CinquilloInfo, rng: random.Random,
                 pool: int = 0, beta: float = BETA, plain: float = 0.0) -> None:
        self.sampler = CinquilloSampler(info)
        self.plain = plain
        self.base = base_state(view, self.sampler.hands(rng))
        self.deals: list[list[int]] = []
        self.cum: list[float] = []
        if pool > 0 and any(who != info.seat and move != PASS for who, move in cinquillo_history(view)):
            history = cinquillo_history(view)
            opts = view["options"]
            deals = [self.sampler.hands(rng) for _ in range(pool)]
            logs = [log_likelihood(info, history, d, bool(opts["cabron"]), bool(opts["double_turn"]), beta)
                    for d in deals]
            self.deals = deals
            self.cum = belief_weights.cumulative_weights(logs)  # tempered: see that module

    def sample(self, rng: random.Random) -> CinquilloState:
        """A fresh determinized copy of the base state."""
        st = self.base.clone()
        if self.deals and (self.plain <= 0.0 or rng.random() >= self.plain):
            st.hands = rng.choices(self.deals, cum_weights=self.cum)[0][:]
        else:
            st.hands = self.sampler.hands(rng)
        return st
