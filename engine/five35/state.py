"""The mutable state of a 535 match, and helpers to build determinized copies for AI players.

Cards are packed multisets of ranks (see :mod:`engine.five35.cards`); moves are ints (see
:mod:`engine.five35.piles`).  Turn the packed ints into rank lists with
:func:`engine.five35.cards.unpack`.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

from engine.five35.cards import RANK_INDEX, counts, deck_packed, holds, pack, unpack
from engine.five35.options import Options
from engine.five35.piles import Tables


class State:
    """A 535 match in progress; mutated in place by the fast path (``RULES.apply``).

    Fields (ints are seats 0..players-1 unless said otherwise):

    ``game``            always ``"535"`` (the registry name)
    ``players``         number of seats, 2..6
    ``seed``            int or str; every deal of the match comes from it (hidden from views, G-1)
    ``options``         the validated :class:`Options` in force
    ``tables``          the shared, read-only precomputed :class:`Tables` (never copied)
    ``hands``           list, per seat, of the packed multiset of the ranks in that hand
    ``counts``          list, per seat, of the number of cards in that hand (kept with ``hands``)
    ``played``          packed multiset of every card played this round (the central pile included)
    ``out``             packed multiset of this round's out-of-play cards (F-2: dealt to nobody);
                        invariant: sum(hands) + played + out == the whole deck
    ``pile``            id of the central pile in :data:`engine.five35.piles.PILES` (0: none, the
                        trick is being led)
    ``leader``          the seat that led (or leads) this trick
    ``last``            the seat that played last in this trick, -1 before the leader has played
    ``passed``          bitmask of the seats that passed this trick (F-8)
    ``in_trick``        number of seats that have not passed this trick
    ``to_move``         the seat to move (meaningless once ``over``)
    ``dealer``          this round's dealer (F-13)
    ``round_no``        0-based index of the round (it also selects the round's deal)
    ``scores``          list of points per seat (lower is better, F-14)
    ``history``         this round's moves, each ``move * 8 + seat`` (public)
    ``trick_start``     index in ``history`` of this trick's first move
    ``rounds``          finished rounds' public results (list of dicts, treated as immutable)
    ``over``            True once the match has ended
    """

    __slots__ = ("counts", "dealer", "game", "hands", "history", "in_trick", "last", "leader",
                 "options", "out", "over", "passed", "pile", "played", "players", "round_no",
                 "rounds", "scores", "seed", "tables", "to_move", "trick_start")

    game: str
    players: int
    seed: int | str
    options: Options
    tables: Tables
    hands: list[int]
    counts: list[int]
    played: int
    out: int
    pile: int
    leader: int
    last: int
    passed: int
    in_trick: int
    to_move: int
    dealer: int
    round_no: int
    scores: list[int]
    history: list[int]
    trick_start: int
    rounds: list[dict[str, Any]]
    over: bool

    def clone(self) -> State:
        """An independent copy (lists copied; the tables, options and round dicts are shared)."""
        c = State.__new__(State)
        c.game = self.game
        c.players = self.players
        c.seed = self.seed
        c.options = self.options
        c.tables = self.tables
        c.hands = self.hands[:]
        c.counts = self.counts[:]
        c.played = self.played
        c.out = self.out
        c.pile = self.pile
        c.leader = self.leader
        c.last = self.last
        c.passed = self.passed
        c.in_trick = self.in_trick
        c.to_move = self.to_move
        c.dealer = self.dealer
        c.round_no = self.round_no
        c.scores = self.scores[:]
        c.history = self.history[:]
        c.trick_start = self.trick_start
        c.rounds = self.rounds[:]
        c.over = self.over
        return c

    def key(self) -> tuple[Any, ...]:
        """Every field but ``tables`` (which follows from ``players`` and ``options``)."""
        return (self.game, self.players, self.seed, self.options, tuple(self.hands),
                tuple(self.counts), self.played, self.out, self.pile, self.leader, self.last,
                self.passed, self.in_trick, self.to_move, self.dealer, self.round_no,
                tuple(self.scores), tuple(self.history), self.trick_start,
                repr(self.rounds), self.over)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, State) and self.key() == other.key()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return (f"<535 state round={self.round_no} to_move={self.to_move} pile={self.pile} "
                f"hands={[unpack(h) for h in self.hands]} scores={self.scores} over={self.over}>")


# --- determinization (for AI players) --------------------------------------------------------


def unseen_cards(state: State, seat: int) -> list[int]:
    """The ranks that ``seat`` cannot see: the other hands plus the out-of-play cards, ascending.

    That is the whole deck minus ``seat``'s hand minus everything played this round (public).
    """
    rest = deck_packed(state.players) - state.hands[seat] - state.played
    return unpack(rest)


def with_hands(state: State, hands: Mapping[int, Sequence[int]]) -> State:
    """A clone of ``state`` in which the seats in ``hands`` hold the given ranks instead.

    Every replaced hand must keep that seat's number of cards, and no rank may then appear more
    often than the deck has copies; the out-of-play cards are recomputed so that the cards are
    conserved.  This is how an AI builds a determinized state: keep its own hand, give the others
    hands sampled from :func:`unseen_cards` (see :func:`determinize`).  Raises ValueError.
    """
    new = state.clone()
    for seat, ranks in hands.items():
        if not 0 <= seat < state.players:
            raise ValueError(f"no seat {seat}")
        if len(ranks) != state.counts[seat]:
            raise ValueError(f"seat {seat} holds {state.counts[seat]} cards, not {len(ranks)}")
        for r in ranks:
            if r not in RANK_INDEX:
                raise ValueError(f"{r!r} is not a rank of the deck")
        new.hands[seat] = pack(ranks)
    total = sum(new.hands) + new.played
    deck = deck_packed(state.players)
    if not holds(deck, total):
        raise ValueError("those hands use more copies of a rank than the deck has")
    new.out = deck - total
    return new


def determinize(state: State, seat: int, rng: random.Random) -> State:
    """A clone in which every seat but ``seat`` holds a hand drawn at random (with ``rng``, a seeded
    :class:`random.Random`) from the cards ``seat`` cannot see, each of its true size."""
    pool = unseen_cards(state, seat)
    rng.shuffle(pool)
    hands: dict[int, list[int]] = {}
    at = 0
    for s in range(state.players):
        if s != seat:
            n = state.counts[s]
            hands[s] = pool[at:at + n]
            at += n
    return with_hands(state, hands)


def check_conservation(state: State) -> bool:
    """The card invariant: hands + played + out of play == the deck, and ``counts`` agree."""
    ok = sum(state.hands) + state.played + state.out == deck_packed(state.players)
    return ok and all(sum(counts(h)) == n for h, n in zip(state.hands, state.counts, strict=True))

