"""The mutable Cinquillo state (fast path) and helpers to inspect it or swap its hidden hands."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from engine.cinquillo.cards import (
    ADJACENT,
    FIVE,
    FIVE_OROS,
    FULL,
    OUTSIDE,
    RANGE,
    codes_of,
)
from engine.cinquillo.options import Options
from engine.rng import Seed


class CinquilloState:
    """A whole Cinquillo match, mutated in place by ``RULES.apply`` (use ``RULES.clone`` to copy).

    Fields (cards are ints 0..39, sets of cards are bit masks with bit ``card`` set; see
    :mod:`engine.cinquillo.cards`):

    * ``game`` ("cinquillo"), ``players`` (n), ``seed`` (the match seed; secret, G-1),
      ``opts`` (the resolved :class:`Options`, immutable and shared between clones).
    * ``step``: the next seat is ``(seat + step) % n`` (1 clockwise, n-1 counter-clockwise);
      ``cabron``, ``double_turn``, ``pay``: copies of the options the fast path tests each move.
    * ``hands``: one bit mask per seat (the private part of the state).
    * ``low``/``high``: per suit (0 oros, 1 copas, 2 espadas, 3 bastos), the rank indexes of the
      lowest and highest card on the table, -1 while the suit is not open.  The table holds every
      card of rank ``low..high`` of an open suit, except the ``blocked`` ones (cabrón, C-13).
    * ``blocked``: mask of the cards jumped over in cabrón, unplayable this round (held in hands).
    * ``playable``: mask of the cards that can be played now by whoever holds them (it does not
      depend on the hands); the legal cards of a seat are ``hands[seat] & playable``.
    * ``turn``: the seat to move, -1 once the match is over.
    * ``round_index`` (0-based), ``dealer`` (seat that dealt this round).
    * ``chips`` (per seat, only with ``pay``; else all 0), ``pot``.
    * ``scores``: per seat, Fractions: points in a points match, round wins otherwise.
    * ``round_wins``: per seat (with teams both partners count the team's wins).
    * ``history``: this round's moves, each ``seat << 6 | move`` (move 40 is a pass).
    * ``rounds``: the finished rounds' public records (JSON dicts, never mutated).
    * ``winners``: the match winners once over, else None.

    ``scores``, ``round_wins``, ``chips`` and ``rounds`` are replaced, never mutated, so clones
    share them.  For a determinized state (AI): ``s = RULES.clone(state)`` then
    :func:`replace_hands` with hands of your choice for the other seats.
    """

    __slots__ = ("blocked", "cabron", "chips", "dealer", "double_turn", "game", "hands", "high",
                 "history", "low", "opts", "pay", "playable", "players", "pot", "round_index",
                 "round_wins", "rounds", "scores", "seed", "step", "turn", "winners")

    game: str
    players: int
    seed: Seed
    opts: Options
    step: int
    cabron: bool
    double_turn: bool
    pay: bool
    hands: list[int]
    low: list[int]
    high: list[int]
    blocked: int
    playable: int
    turn: int
    round_index: int
    dealer: int
    chips: list[int]
    pot: int
    scores: list[Fraction]
    round_wins: list[int]
    history: list[int]
    rounds: list[dict[str, Any]]
    winners: list[int] | None

    def clone(self) -> CinquilloState:
        """An independent copy (only the lists mutated in place are copied)."""
        new = CinquilloState.__new__(CinquilloState)
        new.game = self.game
        new.players = self.players
        new.seed = self.seed
        new.opts = self.opts
        new.step = self.step
        new.cabron = self.cabron
        new.double_turn = self.double_turn
        new.pay = self.pay
        new.hands = self.hands[:]
        new.low = self.low[:]
        new.high = self.high[:]
        new.blocked = self.blocked
        new.playable = self.playable
        new.turn = self.turn
        new.round_index = self.round_index
        new.dealer = self.dealer
        new.chips = self.chips
        new.pot = self.pot
        new.scores = self.scores
        new.round_wins = self.round_wins
        new.history = self.history[:]
        new.rounds = self.rounds
        new.winners = self.winners
        return new

    def __repr__(self) -> str:
        hands = " | ".join(" ".join(codes_of(h)) for h in self.hands)
        return (f"CinquilloState(round={self.round_index}, turn={self.turn}, low={self.low}, "
                f"high={self.high}, hands=[{hands}])")


def table_mask(st: CinquilloState) -> int:
    """The cards on the table (not counting blocked cards, which stay in the hands)."""
    m = 0
    for s in range(4):
        if st.low[s] >= 0:
            m |= RANGE[s * 100 + st.low[s] * 10 + st.high[s]]
    return m & ~st.blocked


def playable_mask(st: CinquilloState) -> int:
    """The ``playable`` mask recomputed from the table (C-3, C-4, C-13)."""
    if st.low[0] < 0:
        return 1 << FIVE_OROS  # nothing on the table: the round opens with the 5 de oros
    table = ADJACENT if not st.cabron else OUTSIDE
    m = 0
    for s in range(4):
        lo = st.low[s]
        m |= table[s * 100 + lo * 10 + st.high[s]] if lo >= 0 else 1 << (s * 10 + FIVE)
    return m & ~st.blocked & FULL


def unseen_by(st: CinquilloState, seat: int) -> int:
    """The cards ``seat`` cannot see: every card held by the other seats (a bit mask)."""
    return FULL & ~table_mask(st) & ~st.hands[seat]


def replace_hands(st: CinquilloState, hands: list[int]) -> None:
    """Give ``st`` other hands (bit masks, one per seat), e.g. to determinize it for a search.

    The new hands must hold exactly the cards the old ones held, with the same number of cards per
    seat (``hand_sizes`` are public), and at the start of a round (empty table) the seat to move
    must keep the 5 de oros (it is public that it holds it).  Raises ValueError otherwise.
    The table, turn and scores are unchanged; ``playable`` does not depend on the hands.
    """
    if len(hands) != st.players:
        raise ValueError(f"need {st.players} hands")
    union = 0
    for h in hands:
        if union & h:
            raise ValueError("a card is in two hands")
        union |= h
    old = 0
    for h in st.hands:
        old |= h
    if union != old:
        raise ValueError("the new hands must hold exactly the cards the old hands held")
    for seat, (a, b) in enumerate(zip(hands, st.hands, strict=True)):
        if a.bit_count() != b.bit_count():
            raise ValueError(f"seat {seat} must keep {b.bit_count()} cards")
    if st.turn >= 0 and st.low[0] < 0 and not hands[st.turn] >> FIVE_OROS & 1:
        raise ValueError("the seat to move at the start of a round holds the 5 de oros")
    st.hands = list(hands)


def cards_accounted(st: CinquilloState) -> int:
    """Cards in hands plus cards on the table: always 40 (a check for tests)."""
    return sum(h.bit_count() for h in st.hands) + table_mask(st).bit_count()


def fraction_json(f: Fraction) -> int | str:
    """A score for JSON: an int when whole, else the string ``"num/den"`` (e.g. ``"7/2"``)."""
    return f.numerator if f.denominator == 1 else f"{f.numerator}/{f.denominator}"


def holder_of_five_oros(hands: list[int]) -> int:
    """The seat holding the 5 de oros, who opens the round (C-3)."""
    for seat, h in enumerate(hands):
        if h >> FIVE_OROS & 1:
            return seat
    raise ValueError("nobody holds the 5 de oros")


def team_of(st: CinquilloState, seat: int) -> int:
    """The team index of ``seat`` (C-12: seat mod n/2, so partners sit n/2 apart); -1 without teams."""
    return seat % (st.players // 2) if st.opts.teams else -1


def teams_list(st: CinquilloState) -> list[list[int]] | None:
    """The teams as lists of seats (4p: [[0, 2], [1, 3]]; 6p: [[0, 3], [1, 4], [2, 5]]), or None."""
    if not st.opts.teams:
        return None
    half = st.players // 2
    return [[t, t + half] for t in range(half)]
