"""Two Cinquillo playout policies for the league's opponents, written apart from the engine's players.

Neither is the medium player's score (:mod:`engine.ai.medium_cinquillo`):

* :func:`chain_move` (the ``pimc_race`` design) plays where it can keep playing: a card followed
  by an unbroken chain of its own cards beyond it is worth the chain, and a card that hands the
  next card of the suit to the others costs a turn of theirs.
* :func:`hold_move` (``pimc_ucb`` and ``ismcts``) plays the card that opens the fewest new cards to
  the others (it holds the table shut), with a small chance of a uniformly random legal card.

Both know the variants: in cabrón (C-13) a jump over the player's own cards blocks them for the
round (it is avoided), a jump over unseen cards blocks them for whoever holds them; in doble turno
(C-11) a 1 or a Rey is a free move.  They read the seat's own hand and the table only (in a playout
the hands are a determinization's); a playout is a function of its seed.
"""

from __future__ import annotations

from bench.league.five35_policies import step
from engine.cinquillo.cards import ADJACENT, FIVE, FULL, OUTSIDE, PASS, RANGE
from engine.cinquillo.state import CinquilloState
from engine.rules import rules_for

_RULES = rules_for("cinquillo")


def _table(st: CinquilloState) -> int:
    m = 0
    for s in range(4):
        if st.low[s] >= 0:
            m |= RANGE[s * 100 + st.low[s] * 10 + st.high[s]]
    return m


def _after(st: CinquilloState, c: int) -> tuple[int, int, int]:
    """``(low, high, jumped)`` of card ``c``'s suit once ``c`` is played (``jumped``: cabrón's
    blocked cards)."""
    s, r = divmod(c, 10)
    lo, hi = st.low[s], st.high[s]
    if lo < 0:
        return r, r, 0
    if r > hi:
        return lo, r, RANGE[s * 100 + (hi + 1) * 10 + r - 1] if r > hi + 1 else 0
    return r, hi, RANGE[s * 100 + (r + 1) * 10 + lo - 1] if r < lo - 1 else 0


def _opens(st: CinquilloState, c: int, lo: int, hi: int) -> int:
    """The cards of ``c``'s suit playable once the suit shows ``lo..hi``."""
    s = c // 10
    return (OUTSIDE if st.cabron else ADJACENT)[s * 100 + lo * 10 + hi]


def chain_score(st: CinquilloState, c: int, hand: int, unseen: int) -> float:
    """How good card ``c`` is for the holder of ``hand`` (see the module docstring)."""
    s, r = divmod(c, 10)
    mine = hand & ~(1 << c)
    _lo, _hi, jumped = _after(st, c)
    score = 0.0
    if st.low[s] < 0:  # opening: both directions start here
        for d in (-1, 1):
            k = r + d
            while 0 <= k <= 9 and mine >> (s * 10 + k) & 1:
                score += 1.2
                k += d
        score += 0.3 * (mine & RANGE[s * 100 + 9]).bit_count() - 0.5
    else:
        d = 1 if r > FIVE else -1
        k = r + d
        while 0 <= k <= 9 and mine >> (s * 10 + k) & 1:
            score += 1.2
            k += d
        if d > 0:
            beyond = RANGE[s * 100 + (r + 1) * 10 + 9] if r < 9 else 0
        else:
            beyond = RANGE[s * 100 + r - 1] if r else 0
        score += 0.4 * (mine & beyond).bit_count()
        if 0 <= r + d <= 9 and unseen >> (s * 10 + r + d) & 1:
            score -= 1.0  # the next card is someone else's: it gives them a move
    if jumped:
        score += 0.5 * (unseen & jumped).bit_count() - 3.0 * (mine & jumped).bit_count()
    if st.double_turn and r in (0, 9):
        score += 1.0
    return score


def chain_move(st: CinquilloState, x: int) -> tuple[int, int]:
    """The chain policy's card for the seat to move (PASS when none is playable), the generator's
    next state."""
    hand = st.hands[st.turn]
    m = hand & st.playable
    if not m:
        return PASS, x
    if not m & (m - 1):
        return m.bit_length() - 1, x
    unseen = FULL & ~_table(st) & ~hand
    best, best_score, ties = PASS, -1e9, 0
    while m:
        low = m & -m
        m ^= low
        c = low.bit_length() - 1
        sc = chain_score(st, c, hand, unseen)
        if sc > best_score + 1e-9:
            best, best_score, ties = c, sc, 1
        elif sc > best_score - 1e-9:
            ties += 1
            x = step(x)
            if (x >> 7) % ties == 0:
                best = c
    return best, x


def hold_score(st: CinquilloState, c: int, hand: int, unseen: int) -> float:
    """How good card ``c`` is for the holder of ``hand``: minus the new cards it opens to others."""
    s = c // 10
    mine = hand & ~(1 << c)
    lo, hi, jumped = _after(st, c)
    before = _opens(st, c, st.low[s], st.high[s]) if st.low[s] >= 0 else 0
    new = _opens(st, c, lo, hi) & ~before & ~jumped
    score = -1.0 * (new & unseen).bit_count() + 0.6 * (new & mine).bit_count()
    score += 0.2 * (mine & RANGE[s * 100 + 9]).bit_count()
    if jumped:
        score += 0.5 * (unseen & jumped).bit_count() - 3.0 * (mine & jumped).bit_count()
    if st.double_turn and c % 10 in (0, 9):
        score += 1.0
    return score


def hold_move(st: CinquilloState, x: int, epsilon: float = 0.1) -> tuple[int, int]:
    """The hold policy's card for the seat to move (a random playable one with chance
    ``epsilon``), the generator's next state."""
    hand = st.hands[st.turn]
    m = hand & st.playable
    if not m:
        return PASS, x
    cards = []
    while m:
        low = m & -m
        m ^= low
        cards.append(low.bit_length() - 1)
    if len(cards) == 1:
        return cards[0], x
    x = step(x)
    if (x & 1023) < epsilon * 1024:
        x = step(x)
        return cards[(x >> 5) % len(cards)], x
    unseen = FULL & ~_table(st) & ~hand
    best, best_score = cards[0], -1e9
    for c in cards:
        sc = hold_score(st, c, hand, unseen)
        if sc > best_score:
            best, best_score = c, sc
    return best, x


def rollout(st: CinquilloState, seed: int, policy: str, epsilon: float = 0.1) -> None:
    """Play the round out in place with ``policy`` (``"chain"`` or ``"hold"``) for every seat."""
    apply = _RULES.apply
    x = seed & 0x3FFFFFFF
    chain = policy == "chain"
    while st.turn >= 0 and not st.rounds:
        if chain:
            m, x = chain_move(st, x)
        else:
            m, x = hold_move(st, x, epsilon)
        apply(st, m)
