"""535 determinizations: the unseen cards dealt at random to the other hands (their public sizes).

In 535 a pass proves nothing (passing is always allowed, F-8), so the only constraints are the
cards the seat saw (its hand, every card played this round) and the hand sizes: a uniform shuffle
of the unseen multiset cut into hands is exact; what is left over is the out-of-play pile.
"""

from __future__ import annotations

import random
from typing import Any

from engine.ai.infoset import Five35Info, five35_played
from engine.five35 import cards as D
from engine.five35.state import State
from engine.rules import rules_for


class Five35Sampler:
    """Draws hidden hands for one 535 information set."""

    def __init__(self, info: Five35Info) -> None:
        self.info = info
        self.pool = D.unpack(info.unseen)
        self.others = [s for s in range(info.players) if s != info.seat]
        if sum(info.sizes[s] for s in self.others) + info.out_count != len(self.pool):
            raise ValueError("the hand sizes do not match the unseen cards")

    def hands(self, rng: random.Random) -> list[int]:
        """One draw: a packed hand per seat (the seat's own hand included)."""
        info = self.info
        pool = self.pool[:]
        # Fisher-Yates with one 30-bit draw a swap (modulo bias below 40 / 2**30): the same
        # uniform shuffle as ``rng.shuffle``, whose interpreted loop cost a search more than a
        # tenth of its time when few moves are compared (callgrind)
        for i in range(len(pool) - 1, 0, -1):
            j = rng.getrandbits(30) % (i + 1)
            pool[i], pool[j] = pool[j], pool[i]
        hands = [0] * info.players
        hands[info.seat] = info.hand
        at = 0
        for s in self.others:
            n = info.sizes[s]
            hands[s] = D.pack(pool[at:at + n])
            at += n
        return hands


def search_options(options: dict[str, Any]) -> dict[str, Any]:
    """The view's options with ``target=1`` so that (scores being zeroed) the match ends with the
    current round: a search evaluates one round and this makes the fast path stop there."""
    opts = dict(options)
    opts["target"] = 1
    return opts


def base_state(view: dict[str, Any], hands: list[int]) -> State:
    """A state of the view's round with the given packed hands, built with the engine's
    ``restore``; scores are zeroed and the match ends with this round (:func:`search_options`)."""
    n = int(view["players"])
    played = five35_played(view)
    out = D.deck_packed(n) - sum(hands) - played
    history = view["history"]
    data = {
        "players": n,
        "seed": 0,  # never used: the search does not deal again
        "options": search_options(view["options"]),
        "hands": [D.unpack(h) for h in hands],
        "played": D.unpack(played),
        "out": D.unpack(out),
        "pile": list(view["pile"]["cards"]),
        "leader": view["leader"],
        "last": -1 if view["last_player"] is None else view["last_player"],
        "passed": list(view["passed"]),
        "to_move": view["to_move"],
        "dealer": view["dealer"],
        "round_no": int(view["round"]) - 1,
        "scores": [0] * n,
        "history": [[h["seat"], h["move"]] for h in history],
        "trick_start": len(history) - len(view["trick_moves"]),
        "rounds": [],
        "over": False,
    }
    state: State = rules_for("535").restore(data)
    return state


class Five35Determinizer:
    """Determinized states of a 535 view: a base state built once, hands redrawn per sample."""

    def __init__(self, view: dict[str, Any], info: Five35Info, rng: random.Random) -> None:
        self.sampler = Five35Sampler(info)
        self.deck = D.deck_packed(info.players)
        self.base = base_state(view, self.sampler.hands(rng))

    def sample(self, rng: random.Random) -> State:
        """A fresh determinized copy of the base state (the out-of-play cards follow the hands)."""
        st = self.base.clone()
        st.hands = self.sampler.hands(rng)
        st.out = self.deck - sum(st.hands) - st.played
        return st
