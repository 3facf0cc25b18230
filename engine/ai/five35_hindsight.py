"""Hindsight evidence against the medium 535 player: earlier moves its later cards rule out.

A 535 hand is dealt once and never drawn to (F-2), so every card a seat plays from some move on
was in its hand at that move.  Those later cards are a lower bound on the hand the seat held, and
for some ranks the bound is exact: every other copy of the rank has been seen elsewhere (played by
another seat or by this seat before, or held by the reader).  With that, some of a seat's past
moves are ones the medium player (:mod:`engine.ai.medium_five35`) could not have made with *any*
hand consistent with what is public now:

* a **pass** when the later cards held a follow legal on that pile whose medium score is at least
  0 whatever the rest of the hand was (with a seat about to go out: any legal follow), or
* a **play** when the later cards held another legal move that scores more than the move played
  can score, whatever the rest of the hand was.

The medium player never makes such a move (its choice is the best score, ties broken by a jitter
of at most 1e-3, and the bounds below are its own scores of the two extreme hands), so each one is
strong evidence that the seat is not the medium player.  A searcher leading whole ranks early
reads as medium to the lead and follow counts of :mod:`.five35_style`; this evidence needs no such
resemblance, only the cards it showed later.  It comes late (a move is judged once the seat has
shown the cards that rule it out), and follows the medium player could never make
(:func:`.five35_style.odd_for_medium`) are left to that count, so that no move is counted twice.

Only public moves and the reader's own hand are read (G-1).
"""

from __future__ import annotations

from typing import Final

from engine.ai import medium_five35
from engine.five35.cards import FIELD_BITS, FIELD_MASK, GUARD, NRANKS, UNIT, copies
from engine.five35.piles import NCARDS, NMOVES, PASS, REQ
from engine.five35.state import State

#: what a candidate must beat the move played by (medium's tie jitter is below 1e-3)
MARGIN: Final = 2e-3


def _ruled_out(st: State, pile: int, move: int, size: int, danger: bool, known: int, loose: int) -> bool:
    """Whether the medium player could not have made ``move`` on ``pile`` with ``size`` cards in
    hand, holding ``known``.  Its score of a move is lowest for the hand ``loose`` (``known`` plus
    one more copy of every rank whose count is not exact: each such rank a move uses may be a
    broken group) and highest for ``known`` itself (only the certain breaks), so both bounds are
    :func:`medium_five35.score_move`'s own."""
    g = GUARD
    h = known | g
    score = medium_five35.score_move
    if move == PASS:
        for m, req in st.tables.cands[pile]:
            if (h - req) & g == g and (danger or score(loose, size, m, False) >= MARGIN):
                return True
        return False
    beat = score(known, size, move, danger) + MARGIN
    for m, req in st.tables.cands[pile]:
        if m != move and (h - req) & g == g and score(loose, size, m, danger) > beat:
            return True
    return False


def ruled_out(st: State, seat: int) -> list[int]:
    """Per seat, how many of its moves this round the medium player could not have made with any
    hand that holds the cards the seat played from that move on (see the module docstring); the
    reader's own seat ``seat`` (whose hand sharpens the bounds) gets 0."""
    players = st.players
    history = st.history
    held = list(st.counts)  # hand sizes, wound back to the round's start
    for h in history:
        held[h & 7] += NCARDS[h >> 3]
    # forward: each move's pile, the mover's hand size and the danger, as the mover saw them
    piles: list[int] = []
    sizes: list[int] = []
    dangers: list[bool] = []
    effect = st.tables.effect
    pile, in_trick = 0, players
    for h in history:
        mover, move = h & 7, h >> 3
        piles.append(pile)
        sizes.append(held[mover])
        danger = False
        for i, c in enumerate(held):
            if i != mover and c <= medium_five35.DANGER:
                danger = True
        dangers.append(danger)
        if move == PASS:
            in_trick -= 1
            if in_trick == 1:  # F-9: all but one passed: a new trick
                pile, in_trick = 0, players
            continue
        held[mover] -= NCARDS[move]
        new = effect[pile * NMOVES + move]
        if new < 0:  # F-9 size limit or F-10 Rule of 8: a new trick
            pile, in_trick = 0, players
        else:
            pile = new
    # backward, per seat: the cards played from each move on (a lower bound on the hand then)
    played_by = [0] * players
    for h in history:
        played_by[h & 7] += REQ[h >> 3]
    total = sum(played_by)
    mine = st.hands[seat]
    deck = copies(players)
    out = [0] * players
    later = [0] * players
    for i in range(len(history) - 1, -1, -1):
        mover, move = history[i] & 7, history[i] >> 3
        later[mover] += REQ[move]
        if mover == seat:
            continue
        if (move != PASS and piles[i] and not dangers[i]
                and medium_five35.score_move(REQ[move], sizes[i], move, False) < 0):
            continue  # a follow medium never makes: five35_style.odd_for_medium counts it already
        known = later[mover]
        # the copies seen outside the seat's hand at that move: everything played but its own
        # cards from this move on, and the reader's own hand
        elsewhere = total - known + mine
        loose = known
        for r in range(NRANKS):
            shift = FIELD_BITS * r
            if ((elsewhere >> shift) & FIELD_MASK) + ((known >> shift) & FIELD_MASK) < deck:
                loose += UNIT[r]  # not exact: the seat may have held another copy
        if move == PASS and not piles[i]:
            continue  # a leader never passes (F-7)
        if _ruled_out(st, piles[i], move, sizes[i], dangers[i], known, loose):
            out[mover] += 1
    return out
