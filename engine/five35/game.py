"""The 535 rules object: the integer fast path (:class:`Five35Rules`) that ``engine.api`` drives.

Rule choices the rule book leaves open (see also the package docstring):

* The deal (F-2) is one card at a time, clockwise, starting with the seat after the dealer, from
  the deck shuffled by ``SplitMix64.for_deal(seed, "535", players, round_no)``; the cards left
  over are out of play for that round.
* After an *add* the central pile is the longer pile, and the adder is the player who played last.
  A later overwrite must match the new pile's type and size (F-8), so once a pile has more than 3
  cards it can no longer be overwritten (a play has at most 3 cards): only added to, or passed.
* The Rule of 8 (F-10) looks at the cards the move puts down: an overwrite or an add containing an
  8 ends the trick; adding a non-8 to a pile that already holds an 8 (it opened the trick) does not.
* A player who puts down their last card ends the round at once (F-12), whatever the trick.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any, Final

from engine.errors import IllegalMove
from engine.five35 import cards as D
from engine.five35.cards import GUARD, ONES, THREES, TWOS
from engine.five35.options import parse_options
from engine.five35.piles import (
    ADD,
    MAX_CARDS,
    NCARDS,
    NMOVES,
    PASS,
    PLAY,
    REQ,
    make_move,
    move_text,
    tables_for,
)
from engine.five35.refusals import explain
from engine.five35.snapshot import restore, snapshot
from engine.five35.state import State
from engine.five35.view import copy_round, view, views
from engine.rng import SplitMix64, seed_text

NAME = "535"
#: entries kept per pile in the legal-move memo before it is emptied: small, because every entry is
#: a GC-tracked object and a memo of ~700k entries made each full collection pause ~0.2 s
MEMO_LIMIT: Final = 2_000


class Five35Rules:
    """535 on integer moves (see :mod:`engine.rules`).  Registered as ``"535"``."""

    name = "535"  # a literal: the compiled class needs a constant default (NAME is the same)

    # --- setting up ------------------------------------------------------------------------------

    def new(self, players: int, seed: int | str, hands: list[list[Any]] | None,
            options: dict[str, Any]) -> State:
        """A new match; ``hands`` (ranks per seat) fixes the first round's deal.  ValueError if bad.

        ``hands`` must have one non-empty list of ranks per seat; seats may hold different numbers
        of cards; no rank may appear more often than the deck has copies; the cards in no hand are
        out of play for that round.  Later rounds are dealt from ``seed`` with ``hand_size``.
        """
        if isinstance(players, bool) or not isinstance(players, int) or not 2 <= players <= 6:
            raise ValueError(f"535 is played by 2 to 6 players, not {players!r}")
        seed_text(seed)  # validates the seed's type
        opts = parse_options(players, options)
        s = State.__new__(State)
        s.game = NAME
        s.players = players
        s.seed = seed
        s.options = opts
        s.tables = tables_for(players, opts.runs_low_beats_high)
        s.dealer = players - 1  # F-13: the last seat deals the first round, so seat 0 leads
        s.round_no = 0
        s.scores = [0] * players
        s.rounds = []
        s.over = False
        if hands is None:
            self._start_round(s, self._deal(s))
        else:
            self._start_round(s, _check_hands(players, hands))
        return s

    def _deal(self, s: State) -> list[int]:
        """F-2: this round's hands (packed), dealt from the seed (see the module docstring)."""
        cards = D.deck_ranks(s.players)
        SplitMix64.for_deal(s.seed, NAME, s.players, s.round_no).shuffle(cards)
        n = s.players
        hands = [0] * n
        first = (s.dealer + 1) % n
        for i in range(n * s.options.hand_size):
            hands[(first + i) % n] += D.UNIT[D.RANK_INDEX[cards[i]]]
        return hands

    def _start_round(self, s: State, hands: list[int]) -> None:
        n = s.players
        s.hands = hands
        s.counts = [D.size(h) for h in hands]
        s.played = 0
        s.out = D.deck_packed(n) - sum(hands)
        s.pile = 0
        s.leader = s.to_move = (s.dealer + 1) % n  # F-13
        s.last = -1
        s.passed = 0
        s.in_trick = n
        s.history = []
        s.trick_start = 0

    def _end_round(self, s: State, seat: int) -> None:
        """F-12 (the seat went out), F-14 (is the match over?), F-13 (next deal)."""
        pts = s.options.points
        # index loops, not zip/max: every search playout ends here, and the compiled code calls
        # those builtins generically
        n = s.players
        gains = [0] * n
        scores = s.scores[:]
        for i in range(n):
            if i != seat:
                gains[i] = D.points_of(s.hands[i], pts)
            scores[i] += gains[i]
        top = scores[0]
        for v in scores:
            if v > top:
                top = v
        s.scores = scores
        s.rounds.append({"round": s.round_no + 1, "dealer": s.dealer, "went_out": seat,
                         "cards_left": s.counts[:], "points": gains, "scores": s.scores[:]})
        if top >= s.options.target:
            s.over = True
            s.pile = 0
            return
        s.round_no += 1
        s.dealer = (s.dealer + 1) % s.players
        self._start_round(s, self._deal(s))

    # --- the fast path ---------------------------------------------------------------------------

    def clone(self, state: State) -> State:
        """An independent copy."""
        return state.clone()

    def to_move(self, state: State) -> int | None:
        """The seat to move, None once the match is over."""
        return None if state.over else state.to_move

    def legal(self, state: State) -> list[int]:
        """The legal moves, ascending (pass, 0, first when the trick is not being led)."""
        if state.over:
            return []
        # Every candidate needs at most 3 copies of a rank, so legality depends only on the pile and
        # on which ranks the hand holds at least 1, 2, 3 times: that signature keys a memo.
        g = GUARD
        h = state.hands[state.to_move] | g
        sig = ((h - ONES) & g) | (((h - TWOS) & g) >> 1) | (((h - THREES) & g) >> 2)
        memo = state.tables.memo[state.pile]
        moves = memo.get(sig)
        if moves is None:
            found = [m for m, r in state.tables.cands[state.pile] if (h - r) & g == g]
            if state.pile:
                found.insert(0, PASS)
            if len(memo) >= MEMO_LIMIT:
                memo.clear()  # bounded memory; the memo is only a speed-up
            # a tuple of ints is not tracked by the garbage collector once it is built
            moves = memo[sig] = tuple(found)
        return list(moves)

    def is_legal(self, state: State, move: int) -> bool:
        """Whether ``move`` is in :meth:`legal` (the memoised list: 535's moves are few)."""
        return move in self.legal(state)

    def apply(self, state: State, move: int) -> None:
        """Apply a legal move in place (unchecked)."""
        s = state
        seat = s.to_move
        s.history.append(move * 8 + seat)
        if move == PASS:
            s.passed |= 1 << seat
            s.in_trick -= 1
            if s.in_trick == 1:  # F-9: all but one passed; the last to play leads (F-8)
                self._new_trick(s, s.last)
            else:
                s.to_move = s.tables.next_seat[s.passed * 8 + seat]
            return
        req = REQ[move]
        s.hands[seat] -= req
        s.played += req
        left = s.counts[seat] - NCARDS[move]
        s.counts[seat] = left
        if left == 0:  # F-12
            self._end_round(s, seat)
            return
        new = s.tables.effect[s.pile * NMOVES + move]
        if new < 0:  # F-9 size limit or F-10 Rule of 8: the player who just played leads
            self._new_trick(s, seat)
        else:
            s.pile = new
            s.last = seat
            s.to_move = s.tables.next_seat[s.passed * 8 + seat]  # F-11

    @staticmethod
    def _new_trick(s: State, leader: int) -> None:
        s.pile = 0
        s.passed = 0
        s.in_trick = s.players
        s.leader = s.to_move = leader
        s.last = -1
        s.trick_start = len(s.history)

    # --- notation --------------------------------------------------------------------------------

    def encode(self, state: State, move: int) -> str:
        """Canonical notation: ``pass``, ``play 7 7``, ``add 2 7`` (ranks ascending)."""
        return move_text(move)

    def decode(self, state: State, text: str) -> int:
        """The move int of a notation.

        Lenient about spacing (any whitespace), letter case of the word and the order of the ranks;
        strict otherwise: ``pass`` alone, or ``play``/``add`` followed by at least one rank of the
        deck.  A readable move that can never be legal still decodes (to an extended int) so that
        :meth:`explain` can say why.
        """
        parts = text.split()
        if not parts:
            raise IllegalMove("bad_notation", "Empty move: write pass, play <ranks> or add <ranks>.",
                              text=text)
        word = parts[0].lower()
        if word == "pass":
            if len(parts) != 1:
                raise IllegalMove("bad_notation", "pass takes no cards.", text=text)
            return PASS
        if word not in ("play", "add"):
            raise IllegalMove("bad_notation",
                              f"Cannot read {text!r}: write pass, play <ranks> or add <ranks>, "
                              "for example play 7 7.", text=text)
        if len(parts) == 1:
            raise IllegalMove("bad_notation", f"Say which cards to {word}, for example {word} 7.",
                              text=text)
        ranks: list[int] = []
        for p in parts[1:]:
            if not (p.isascii() and p.isdigit()) or int(p) not in D.RANK_INDEX:
                raise IllegalMove("bad_notation",
                                  f"{p!r} is not a card: the ranks are "
                                  f"{', '.join(map(str, D.RANKS))}.", text=text, card=p)
            ranks.append(D.RANK_INDEX[int(p)])
        if len(ranks) > 15:
            raise IllegalMove("too_many_cards",
                              f"You can put down at most {MAX_CARDS} cards at a time, not {len(ranks)}.",
                              count=len(ranks))
        return make_move(PLAY if word == "play" else ADD, tuple(sorted(ranks)))

    def explain(self, state: State, move: int) -> Exception:
        """Why ``move`` is refused now (G-2); see :func:`engine.five35.refusals.explain`."""
        return explain(state, move)

    # --- reporting -------------------------------------------------------------------------------

    def view(self, state: State, seat: int | None) -> dict[str, Any]:
        """What ``seat`` may know (G-1); see :func:`engine.five35.view.view`."""
        return view(self, state, seat)

    def views(self, state: State, seats: Sequence[int | None]) -> list[dict[str, Any]]:
        """The views of several seats, sharing their public parts; see :func:`engine.five35.view.views`."""
        return views(self, state, seats)

    def result(self, state: State) -> dict[str, Any] | None:
        """Once over: ``winners`` (fewest points, ties share, F-14), ``scores``, ``rounds``."""
        if not state.over:
            return None
        best = min(state.scores)
        return {
            "winners": [i for i, p in enumerate(state.scores) if p == best],
            "scores": state.scores[:],
            "rounds": [copy_round(r) for r in state.rounds],
            "target": state.options.target,
        }

    def snapshot(self, state: State) -> dict[str, Any]:
        """The whole state as JSON data; see :func:`engine.five35.snapshot.snapshot`."""
        return snapshot(state)

    def restore(self, data: dict[str, Any]) -> State:
        """The state saved by ``snapshot``; see :func:`engine.five35.snapshot.restore`."""
        return restore(self, data)


def _check_hands(players: int, hands: list[list[Any]]) -> list[int]:
    """Validate the ``hands`` argument; return the packed hands."""
    if not isinstance(hands, list | tuple) or len(hands) != players:
        raise ValueError(f"hands must be a list of {players} hands, one per seat")
    packed: list[int] = []
    total: Counter[int] = Counter()
    for seat, hand in enumerate(hands):
        if not isinstance(hand, list | tuple) or not hand:
            raise ValueError(f"hands[{seat}] must be a non-empty list of ranks")
        for r in hand:
            if isinstance(r, bool) or not isinstance(r, int) or r not in D.RANK_INDEX:
                raise ValueError(f"hands[{seat}]: {r!r} is not a rank of the deck "
                                 f"({', '.join(map(str, D.RANKS))})")
        total.update(hand)
        packed.append(sum(D.UNIT[D.RANK_INDEX[r]] * c for r, c in Counter(hand).items()))
    for r in D.RANKS:
        if total[r] > D.copies(players):
            raise ValueError(f"hands hold {total[r]} cards of rank {r}; the deck has "
                             f"{D.copies(players)}")
    return packed

