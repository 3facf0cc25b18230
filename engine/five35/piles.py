"""Piles (F-4..F-6), what a play or an add does to the central pile (F-8, F-9, F-10), the table
of integer moves, and the precomputed per-table lookup tables of the fast path.

A *pile* is the tuple ``(kind, lo, size)``: ``kind`` is :data:`NONE` (no pile: the trick is
being led), :data:`SINGLE`, :data:`GROUP` or :data:`RUN`; ``lo`` is the rank index of its lowest
card (the only rank, for a single or a group); ``size`` its number of cards.  A run's cards are the
``size`` consecutive rank indices from ``lo`` (F-5: consecutive in the deck's order, so 5-7 and
9-11 are runs).  Every pile that can exist has a small integer id (:data:`PILE_ID`).

A *move* is an int: ``0`` is pass; ``1 .. len(MOVES)-1`` index :data:`MOVES`, the table of every
distinct ``(kind, ranks)`` that can ever be legal (``play`` of a single/group/run of 1-3 cards,
or ``add`` of 1-3 cards that extends some group or run).  What a move does depends on the pile it
is played on; that is precomputed per pile in :class:`Tables`.  Moves that can never be legal but
can still be written (``play 1 5``, ``add 1 2 3 4``) get an *extended* int (>= :data:`EXT_BASE`)
from the notation parser, so that ``explain`` can say why they are refused.
"""

from __future__ import annotations

from itertools import combinations_with_replacement
from typing import Final

from engine.five35.cards import EIGHT, FIELD_BITS, FIELD_MASK, NRANKS, RANKS, pack_indices

# Final: the compiled engine reads these as constants, not as module-dict look-ups
NONE: Final = 0
SINGLE: Final = 1
GROUP: Final = 2
RUN: Final = 3
KIND_NAMES = {NONE: None, SINGLE: "single", GROUP: "group", RUN: "run"}
PASS: Final = 0
PLAY: Final = 1
ADD: Final = 2
MOVE_WORDS = {PASS: "pass", PLAY: "play", ADD: "add"}

#: F-9: a run reaches its end at 5 cards
RUN_END: Final = 5
#: a play or an add puts down at most 3 cards (F-4, F-8)
MAX_CARDS: Final = 3

Pile = tuple[int, int, int]
EMPTY: Pile = (NONE, 0, 0)


def group_end(players: int) -> int:
    """F-9: a group ends the trick at 4 cards, 5 with 5-6 players."""
    return 5 if players >= 5 else 4


def pile_cards(pile: Pile) -> list[int]:
    """The rank indices of a pile's cards, ascending."""
    kind, lo, size = pile
    if kind == RUN:
        return list(range(lo, lo + size))
    return [lo] * size


def pile_cards_ranks(pile: Pile) -> list[int]:
    """A pile's cards as ranks, ascending (empty for no pile)."""
    return [RANKS[i] for i in pile_cards(pile)]


def shape(ranks: tuple[int, ...]) -> Pile | None:
    """The pile formed by some rank indices (sorted), or None when they form no pile (F-4)."""
    n = len(ranks)
    if n == 0:
        return None
    lo = ranks[0]
    if n == 1:
        return (SINGLE, lo, 1)
    if all(r == lo for r in ranks):
        return (GROUP, lo, n)
    if all(ranks[k] == lo + k for k in range(n)):
        return (RUN, lo, n)
    return None


def beats(new: Pile, old: Pile, runs_low_beats_high: bool) -> bool:
    """F-6 for two piles of the same kind and size: does ``new`` beat ``old``?"""
    if new[0] == RUN and runs_low_beats_high:
        return new[1] < old[1]
    return new[1] > old[1]


def judge(pile: Pile, kind: int, ranks: tuple[int, ...], runs_low_beats_high: bool,
          group_size_end: int) -> tuple[str | None, Pile, bool]:
    """What a move of ``kind`` with ``ranks`` (sorted rank indices) does on ``pile``.

    Ignores the hand (whether the player holds the cards).  Returns ``(error, new_pile, ends)``:
    ``error`` is None for a legal move, else the IllegalMove code; ``new_pile`` the central pile
    afterwards; ``ends`` whether the move ends the trick (F-9 size limits, F-10 Rule of 8).  This
    is the single definition of legality: the fast path's tables are built from it.
    """
    leading = pile[0] == NONE
    if kind == PASS:
        return ("leader_cannot_pass", pile, False) if leading else (None, pile, False)
    if len(ranks) > MAX_CARDS:
        return "too_many_cards", pile, False
    has8 = EIGHT in ranks
    if kind == PLAY:
        new = shape(ranks)
        if new is None:
            return "not_a_pile", pile, False
        if leading:  # F-7: any pile; F-10: the opening pile never fires the Rule of 8
            return None, new, False
        if new[0] != pile[0] or new[2] != pile[2]:
            return "wrong_type_or_size", pile, False
        if not beats(new, pile, runs_low_beats_high):
            return "does_not_beat", pile, False
        return None, new, has8
    # ADD (F-8)
    if leading:
        return "nothing_to_add_to", pile, False
    pkind, lo, size = pile
    if pkind == SINGLE:
        return "cannot_add_to_single", pile, False
    if pkind == GROUP:
        if any(r != lo for r in ranks):
            return "add_does_not_fit", pile, False
        n = size + len(ranks)
        if n > group_size_end:
            return "too_long", pile, False
        return None, (GROUP, lo, n), has8 or n >= group_size_end
    # RUN: the added cards must be new ranks that, with the run, make one longer run
    hi = lo + size - 1
    if len(set(ranks)) != len(ranks) or any(lo <= r <= hi for r in ranks):
        return "add_does_not_fit", pile, False
    nlo, nhi = min(lo, ranks[0]), max(hi, ranks[-1])
    n = size + len(ranks)
    if nhi - nlo + 1 != n:
        return "add_does_not_fit", pile, False
    if n > RUN_END:
        return "too_long", pile, False
    return None, (RUN, nlo, n), has8 or n >= RUN_END


def _all_piles() -> list[Pile]:
    piles: list[Pile] = [EMPTY]
    piles += [(SINGLE, i, 1) for i in range(NRANKS)]
    piles += [(GROUP, i, n) for i in range(NRANKS) for n in range(2, 6)]
    piles += [(RUN, i, n) for n in range(2, RUN_END + 1) for i in range(NRANKS - n + 1)]
    return piles


#: every pile that can be on the table; its index is its id (0 = no pile)
PILES: Final[list[Pile]] = _all_piles()
PILE_ID: dict[Pile, int] = {p: i for i, p in enumerate(PILES)}


def _all_moves() -> list[tuple[int, tuple[int, ...]]]:
    found: set[tuple[int, tuple[int, ...]]] = set()
    for n in range(1, MAX_CARDS + 1):
        for ranks in combinations_with_replacement(range(NRANKS), n):
            if shape(ranks) is not None:
                found.add((PLAY, ranks))
            for pile in PILES[1:]:
                if judge(pile, ADD, ranks, True, 5)[0] is None:
                    found.add((ADD, ranks))
                    break
    return [(PASS, ()), *sorted(found, key=lambda m: (m[0], len(m[1]), m[1]))]


#: the move table: ``MOVES[m] = (kind, rank indices ascending)``; ``MOVES[0]`` is pass
MOVES: Final[list[tuple[int, tuple[int, ...]]]] = _all_moves()
NMOVES: Final = len(MOVES)
MOVE_ID: dict[tuple[int, tuple[int, ...]], int] = {m: i for i, m in enumerate(MOVES)}
#: the packed cards each move puts down
REQ: Final[list[int]] = [pack_indices(r) for _, r in MOVES]
#: the number of cards each move puts down
NCARDS: Final[list[int]] = [len(r) for _, r in MOVES]

#: extended moves (readable but never legal): ``EXT_BASE + (packed_counts << 2) + kind``
EXT_BASE: Final = 65536  # 1 << 16


def move_parts(move: int) -> tuple[int, tuple[int, ...]]:
    """``(kind, rank indices ascending)`` of a table move or an extended move."""
    if move < EXT_BASE:
        return MOVES[move]
    rest = move - EXT_BASE
    kind, packed = rest & 3, rest >> 2
    ranks: list[int] = []
    for i in range(NRANKS):
        ranks.extend([i] * ((packed >> (FIELD_BITS * i)) & FIELD_MASK))
    return kind, tuple(ranks)


def make_move(kind: int, ranks: tuple[int, ...]) -> int:
    """The int of a move: its table index, else an extended int (counts of a rank must be < 16)."""
    m = MOVE_ID.get((kind, ranks))
    if m is not None:
        return m
    return EXT_BASE + (pack_indices(ranks) << 2) + kind


def move_text(move: int) -> str:
    """The canonical notation of a move: ``pass``, ``play 7 7``, ``add 2 7``."""
    kind, ranks = move_parts(move)
    if kind == PASS:
        return "pass"
    return " ".join([MOVE_WORDS[kind], *(str(RANKS[r]) for r in ranks)])


class Tables:
    """The precomputed lookups of one kind of table (player count, ``runs_low_beats_high``).

    ``cands[pile_id]``
        ``(move, packed cards)`` of every play/add legal on that pile for a hand holding them
        (pass excluded), in move order.
    ``effect[pile_id * NMOVES + move]``
        the pile id after that legal move, or ``-1`` when the move ends the trick.
    ``memo[pile_id]``
        a memo of legal-move lists keyed by the hand's signature (see ``Five35Rules.legal``);
        the only mutable part, a pure cache.
    ``next_seat[passed_mask * 8 + seat]``
        the next seat clockwise after ``seat`` that has not passed this trick (F-11); -1 if none.
    """

    __slots__ = ("cands", "effect", "group_end", "memo", "next_seat", "players", "runs_low_beats_high")

    def __init__(self, players: int, runs_low_beats_high: bool) -> None:
        self.players = players
        self.runs_low_beats_high = runs_low_beats_high
        self.group_end = group_end(players)
        self.cands: list[list[tuple[int, int]]] = []
        self.effect: list[int] = [-2] * (len(PILES) * NMOVES)
        for pid, pile in enumerate(PILES):
            row: list[tuple[int, int]] = []
            for m in range(1, NMOVES):
                kind, ranks = MOVES[m]
                err, new, ends = judge(pile, kind, ranks, runs_low_beats_high, self.group_end)
                if err is None:
                    row.append((m, REQ[m]))
                    self.effect[pid * NMOVES + m] = -1 if ends else PILE_ID[new]
            self.cands.append(row)
        self.memo: list[dict[int, tuple[int, ...]]] = [{} for _ in PILES]
        self.next_seat: list[int] = [-1] * (8 * (1 << players))
        for mask in range(1 << players):
            for seat in range(players):
                for k in range(1, players + 1):
                    t = (seat + k) % players
                    if not mask >> t & 1:
                        self.next_seat[mask * 8 + seat] = t
                        break


_TABLES: dict[tuple[int, bool], Tables] = {}


def tables_for(players: int, runs_low_beats_high: bool) -> Tables:
    """The (cached, shared, read-only) tables of a table kind."""
    key = (players, runs_low_beats_high)
    t = _TABLES.get(key)
    if t is None:
        t = _TABLES[key] = Tables(players, runs_low_beats_high)
    return t
