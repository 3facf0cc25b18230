"""From a seat's view (G-1) to its information set: what the seat knows about the hidden hands.

An AI player gets nothing but ``engine.view(state, seat)``.  This module reads that dict and
derives the *constraints* every determinization must satisfy:

* Cinquillo (:class:`CinquilloInfo`): the unseen cards are the deck minus the table minus the own
  hand (blocked cabrón cards stay in hands, so they are unseen too); each other seat holds exactly
  its public hand size; a pass (C-5) proves the passer held none of the cards playable at that
  moment, and so does the end of a doble-turno extra turn (C-11: the extra turn ends without a
  pass only when the player has no legal card); at the start of a round the seat to move holds
  the 5 de oros (C-3).
* 535 (:class:`Five35Info`): the unseen cards are the deck minus the own hand minus every card
  played this round; they are split among the other hands (public sizes) and the out-of-play
  cards.  A pass proves nothing (passing is always allowed, F-8).

The constraints are plain frozen dataclasses of ints, so two views that differ only in the other
seats' hidden cards give *equal* constraints (the G-1 test compares them).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.cinquillo.cards import FIVE_OROS, FULL, RANGE, SUITS, card, mask_of
from engine.cinquillo.cards import PASS as CINQ_PASS
from engine.cinquillo.state import CinquilloState, playable_mask
from engine.five35 import cards as D
from engine.five35.piles import ADD, PASS, PLAY

#: rank indexes of the Cinquillo cards that give an extra turn under doble turno (1 and Rey, C-11)
_PLAYED_AGAIN = (0, 9)


@dataclass(frozen=True, slots=True)
class CinquilloInfo:
    """What a Cinquillo seat knows about the hidden cards (all sets are 40-bit card masks).

    ``voids[s]``: cards seat ``s`` provably does not hold; ``musts[s]``: cards it provably holds
    (only the 5 de oros before the round's first move).  Entries for ``seat`` itself are 0.
    """

    seat: int
    players: int
    hand: int
    sizes: tuple[int, ...]
    unseen: int
    voids: tuple[int, ...]
    musts: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Five35Info:
    """What a 535 seat knows: its hand and the unseen cards (packed multisets of ranks).

    ``unseen`` holds the other hands plus ``out_count`` out-of-play cards; the other seats hold
    ``sizes[s]`` cards each.
    """

    seat: int
    players: int
    hand: int
    sizes: tuple[int, ...]
    unseen: int
    out_count: int


def info_from_view(view: dict[str, Any]) -> CinquilloInfo | Five35Info:
    """The information set of the view's seat (a seat's view, not a spectator's)."""
    if view.get("seat") is None or view.get("hand") is None:
        raise ValueError("an AI player needs a seat's view (with its own hand), not a spectator's")
    if view["game"] == "cinquillo":
        return cinquillo_info(view)
    if view["game"] == "535":
        return five35_info(view)
    raise ValueError(f"no AI player for the game {view['game']!r}")


# --- Cinquillo ---------------------------------------------------------------------------------


def cinquillo_table(view: dict[str, Any]) -> tuple[list[int], list[int], int]:
    """``(low, high, blocked)`` of the view's table: rank indexes per suit (-1 closed), a mask."""
    low = [-1] * 4
    high = [-1] * 4
    for s, letter in enumerate(SUITS):
        ends = view["table"][letter]
        if ends is not None:
            low[s] = card(ends["low"]) % 10
            high[s] = card(ends["high"]) % 10
    return low, high, mask_of(card(c) for c in view["blocked"])


def cinquillo_history(view: dict[str, Any]) -> list[tuple[int, int]]:
    """The round's public moves as ``(seat, move)`` with the engine's int moves (40 is a pass)."""
    return [(int(h["seat"]), CINQ_PASS if h["move"] == "pass" else card(h["move"]))
            for h in view["history"]]


class ReplayTable:
    """The public table of a Cinquillo round, replayed move by move to know what was playable.

    ``st`` is a partial engine state holding only the table (low, high, blocked) and the cabrón and
    doble-turno flags: what ``engine.cinquillo.playable_mask`` reads, so the playable set at each
    moment comes from the engine's own definition.
    """

    def __init__(self, cabron: bool, double_turn: bool) -> None:
        st = CinquilloState.__new__(CinquilloState)
        st.low = [-1] * 4
        st.high = [-1] * 4
        st.blocked = 0
        st.cabron = cabron
        st.double_turn = double_turn
        self.st = st

    def playable(self) -> int:
        """The cards playable now by whoever holds them."""
        return playable_mask(self.st)

    def play(self, c: int) -> None:
        """Put card ``c`` on the table (blocking what a cabrón jump passes over)."""
        st = self.st
        s, r = divmod(c, 10)
        if st.low[s] < 0:
            st.low[s] = st.high[s] = r
        elif r > st.high[s]:
            if r > st.high[s] + 1:  # cabrón jump: the cards in between are blocked (C-13)
                st.blocked |= RANGE[s * 100 + (st.high[s] + 1) * 10 + r - 1]
            st.high[s] = r
        else:
            if r < st.low[s] - 1:
                st.blocked |= RANGE[s * 100 + (r + 1) * 10 + st.low[s] - 1]
            st.low[s] = r


def cinquillo_info(view: dict[str, Any]) -> CinquilloInfo:
    """The constraints of a Cinquillo seat (see the module docstring)."""
    seat = int(view["seat"])
    n = int(view["players"])
    opts = view["options"]
    hand = mask_of(card(c) for c in view["hand"])
    low, high, blocked = cinquillo_table(view)
    table = 0
    for s in range(4):
        if low[s] >= 0:
            table |= RANGE[s * 100 + low[s] * 10 + high[s]]
    table &= ~blocked
    unseen = FULL & ~table & ~hand
    voids = [0] * n
    musts = [0] * n
    history = cinquillo_history(view)
    double = bool(opts["double_turn"])
    replay = ReplayTable(bool(opts["cabron"]), double)
    to_move = view["to_move"]
    for i, (who, move) in enumerate(history):
        if move == CINQ_PASS:
            voids[who] |= replay.playable()  # C-5: a pass proves none of these was held
            continue
        replay.play(move)
        if double and move % 10 in _PLAYED_AGAIN:
            after = history[i + 1][0] if i + 1 < len(history) else to_move
            if after is not None and after != who:
                # C-11: the extra turn ended without a move, so the player had no legal card
                voids[who] |= replay.playable()
    if not history and to_move is not None and to_move != seat:
        musts[to_move] |= 1 << FIVE_OROS  # C-3: whoever opens holds the 5 de oros
    voids = [v & unseen if s != seat else 0 for s, v in enumerate(voids)]
    sizes = tuple(int(x) for x in view["hand_sizes"])
    return CinquilloInfo(seat=seat, players=n, hand=hand, sizes=sizes, unseen=unseen,
                         voids=tuple(voids), musts=tuple(musts))


# --- 535 ---------------------------------------------------------------------------------------


def five35_move(text: str) -> tuple[int, tuple[int, ...]]:
    """``(kind, rank indices)`` of a 535 move in canonical notation (``pass``: ``(PASS, ())``)."""
    parts = text.split()
    if parts[0] == "pass":
        return PASS, ()
    kind = PLAY if parts[0] == "play" else ADD
    return kind, tuple(sorted(D.RANK_INDEX[int(p)] for p in parts[1:]))


def five35_played(view: dict[str, Any]) -> int:
    """The packed multiset of every card played this round (public: the history shows them)."""
    played = 0
    for h in view["history"]:
        _, ranks = five35_move(h["move"])
        played += D.pack_indices(ranks)
    return played


def five35_info(view: dict[str, Any]) -> Five35Info:
    """The constraints of a 535 seat (see the module docstring)."""
    seat = int(view["seat"])
    n = int(view["players"])
    hand = D.pack(int(r) for r in view["hand"])
    unseen = D.deck_packed(n) - hand - five35_played(view)
    return Five35Info(seat=seat, players=n, hand=hand, sizes=tuple(int(x) for x in view["hand_sizes"]),
                      unseen=unseen, out_count=int(view["out_of_play"]))
