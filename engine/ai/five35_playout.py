"""The 535 playout policies: the medium player's form, computed from precomputed move rows.

A search's strength at a fixed CPU budget is the number of rounds it can play out, and a playout
spent most of its time in :func:`engine.ai.medium_five35.choose` (a score built from the move's ranks
on every call) and in building the legal-move list.  Here both are folded into one pass over a
per-pile row of ``(move, cards, static score, used-rank mask, has an 8, size)``: legality is the
engine's borrow test on the guarded hand, and the one hand-dependent term of the score, *how many
groups the move breaks*, falls out of the same subtraction (a used rank with copies left has
non-zero low bits after it).

The score's weights are a :class:`Weights`.  With :data:`MEDIUM` the move chosen has exactly the
medium player's score (ties broken uniformly at random, as the medium player's jitter does) and the
policy passes exactly when the medium player does, which ``tests/engine/test_ai_five35_playout.py``
checks against :func:`engine.ai.medium_five35.choose`.  :data:`HARD`, the hard player's playouts,
has the same form with weights tuned on duplicate deals (``bench/five35_policy.py``): it sheds
single cards when it leads and groups and runs when it follows, a far stronger player than medium
(``bench/results/five35_experiments.txt``), so the rounds the hard player's search plays out
look more like the strong play it meets.
"""

from __future__ import annotations

from typing import Final

from engine.ai import medium_five35
from engine.five35.cards import EIGHT, FIELD_BITS, GUARD
from engine.five35.game import Five35Rules
from engine.five35.piles import ADD, MOVES, NCARDS, NMOVES, PASS, Tables
from engine.five35.state import State

#: the low (count) bits of one rank's field, below its guard bit
_COUNT_BITS: Final = 7  # (1 << (FIELD_BITS - 1)) - 1

Row = tuple[int, int, float, int, bool, int]


class Weights:
    """The weights of a playout policy of the medium player's form
    (:func:`engine.ai.medium_five35.score_move`): per card shed, per mean rank (low ranks first), an
    add's bonus, per broken group, an 8 played near the end (``near`` cards left, or ``danger``: a
    seat with that many cards or fewer) or kept, per card when leading a trick (``lead``), the
    score a follow must reach (``pass_t``; below it, and with no seat in danger, the policy passes),
    a follow that ends the trick and so wins the lead (``win``, F-9/F-10), and per rank the move
    uses (``ranks``: a run sheds several ranks in one play); ``jitter`` adds to every move's score
    a uniform draw within half of it either way (a noisy player: a search's model of players who
    are not this policy, issue 38; 0, the default, leaves the policy deterministic but for ties).
    :data:`MEDIUM` is the medium player; :data:`HARD` the hard player's playouts."""

    __slots__ = ("add", "brk", "card", "danger", "e8keep", "e8near", "jitter", "lead", "low", "near",
                 "pass_t", "ranks", "win")

    def __init__(self, card: float = medium_five35.PER_CARD, low: float = medium_five35.LOW_RANK,
                 add: float = medium_five35.ADD_BONUS, brk: float = medium_five35.BREAK,
                 e8near: float = medium_five35.KEEP_EIGHT, e8keep: float = medium_five35.KEEP_EIGHT,
                 near: int = 3, danger: int = medium_five35.DANGER, lead: float = 0.0,
                 pass_t: float = 0.0, win: float = 0.0, ranks: float = 0.0, jitter: float = 0.0) -> None:
        self.card = card
        self.low = low
        self.add = add
        self.brk = brk
        self.e8near = e8near
        self.e8keep = e8keep
        self.near = near
        self.danger = danger
        self.lead = lead
        self.pass_t = pass_t
        self.win = win
        self.ranks = ranks
        self.jitter = jitter


#: the medium player, exactly (tests/engine/test_ai_five35_playout.py)
MEDIUM: Final[Weights] = Weights()


def _static_score(move: int, w: Weights, tables: Tables, pile: int) -> float:
    """The part of the score that depends on the move and the pile alone (cards shed, low ranks,
    add, lead, ranks used, a follow that ends the trick)."""
    kind, ranks = MOVES[move]
    n = NCARDS[move]
    score = w.card * n - w.low * sum(ranks) / n + w.ranks * len(set(ranks))
    if kind == ADD:
        score += w.add
    if pile == 0:
        score += w.lead * n
    elif tables.effect[pile * NMOVES + move] < 0:
        score += w.win
    return score


def _used_mask(move: int) -> int:
    """The count bits of every rank the move uses (a hand with copies left there breaks a group)."""
    mask = 0
    for r in set(MOVES[move][1]):
        mask |= _COUNT_BITS << (FIELD_BITS * r)
    return mask


#: per (table kind, weight set) (ids of the shared, read-only Tables and Weights), the rows of
#: every pile: a handful of table kinds exist (player count x run order) and two weight sets, so
#: this cache stays bounded
_ROWS: dict[tuple[int, int], tuple[Tables, Weights, list[list[Row]]]] = {}


#: per table kind (id of the shared Tables), per pile id, the cards each row needs (the rows'
#: second field, in the same order; the weights do not change them): bounded as :data:`_ROWS`
_REQS: dict[int, tuple[Tables, list[list[int]]]] = {}


def reqs_for(tables: Tables) -> list[list[int]]:
    """Per pile id, the packed cards each of its rows needs (see :data:`_REQS`)."""
    hit = _REQS.get(id(tables))
    if hit is not None and hit[0] is tables:
        return hit[1]
    reqs = [[r for _, r in cands] for cands in tables.cands]
    _REQS[id(tables)] = (tables, reqs)
    return reqs


def rows_for(tables: Tables, w: Weights = MEDIUM) -> list[list[Row]]:
    """Per pile id, the rows of the moves that may be legal on it (see the module docstring), scored
    with ``w``."""
    key = (id(tables), id(w))
    hit = _ROWS.get(key)
    if hit is not None and hit[0] is tables and hit[1] is w:
        return hit[2]
    rows = [[(m, r, _static_score(m, w, tables, pid), _used_mask(m), EIGHT in MOVES[m][1], NCARDS[m])
             for m, r in cands] for pid, cands in enumerate(tables.cands)]
    _ROWS[key] = (tables, w, rows)
    return rows


#: the playouts' tie-breaking generators (30-bit linear congruential, full period: a = 1 mod 4 and c
#: odd; two different ones so that a decision's draws are not the next decision's seed): a
#: ``random.Random`` per playout cost ~15 us to seed, half a compiled playout, and ties need no
#: better randomness than this.  30 bits, not 31: the compiled code multiplies two ints natively
#: only when both are below 2**30 (mypyc's overflow test), and the 31-bit generator's every step
#: took the big-int path (a tenth of a playout's instructions, callgrind)
_MASK: Final = 0x3FFFFFFF
_LCG_A: Final = 29773421
_LCG_C: Final = 12345
_TIE_A: Final = 22695477
#: 2**-20: a 20-bit draw times this is uniform in [0, 1)
_UNIT: Final = 1.0 / (1 << 20)
#: below every move's score (a constant: ``float("-inf")`` parsed a string on every call)
_NO_SCORE: Final = -1e300


def choose(st: State, rows: list[list[Row]], tie: int, w: Weights = MEDIUM) -> int:
    """The policy's move for the seat to move in ``st`` (``rows``: :func:`rows_for` with the same
    weights ``w``, by default the medium player's; ``tie``: a seed in 0..2**30-1 for breaking ties
    uniformly at random)."""
    return choose_with(st, rows, reqs_for(st.tables), tie, w)


def choose_with(st: State, rows: list[list[Row]], reqs: list[list[int]], tie: int, w: Weights) -> int:
    """:func:`choose` with the table's :func:`reqs_for` looked up once per playout."""
    seat = st.to_move
    hand = st.hands[seat] | GUARD
    size = st.counts[seat]
    danger = False
    limit = w.danger
    for i, c in enumerate(st.counts):
        if c <= limit and i != seat:
            danger = True
    eight_bonus = w.e8near
    keep_eight = -w.e8keep
    near = w.near
    brk = w.brk
    jitter = w.jitter
    best, best_score, ties = PASS, _NO_SCORE, 0
    pile_rows = rows[st.pile]
    pile_reqs = reqs[st.pile]
    for i in range(len(pile_reqs)):
        # the cards first, from a list of ints: most rows are not legal, and unpacking a whole
        # row (six boxed fields) for each was most of a playout's time (callgrind)
        d = hand - pile_reqs[i]
        if d & GUARD != GUARD:
            continue  # the hand does not hold these cards
        m, _req, base, used, eight, n = pile_rows[i]  # (not "_": mypyc boxes that one)
        if n == size:
            return m  # going out wins the round (F-12)
        broken = d & used
        if broken:
            # one break per rank with copies left: adding ``used`` carries every such field's
            # non-zero count into its guard bit, so the guard bits set count the broken ranks
            # (counted by clearing the lowest set bit: ``int.bit_count`` is a boxed method call
            # in the compiled code, and a move breaks at most a few ranks)
            b = (broken + used) & GUARD
            k = 0
            while b:
                b &= b - 1
                k += 1
            score = base - brk * k
        else:
            score = base
        if eight:
            score += eight_bonus if danger or size - n <= near else keep_eight
        if jitter:
            tie = (tie * _TIE_A + 1) & _MASK
            score += jitter * ((tie >> 10) * _UNIT - 0.5)
        if score > best_score:
            best, best_score, ties = m, score, 1
        elif score == best_score:
            ties += 1
            tie = (tie * _TIE_A + 1) & _MASK
            if (tie >> 8) % ties == 0:  # reservoir sampling: each tied move kept with chance 1/ties
                best = m
    if st.pile and best_score < w.pass_t and not danger:
        return PASS
    return best


def move_scores(st: State, w: Weights) -> dict[int, float]:
    """Per play the seat to move may make in ``st`` (not pass), the score the policy of weights
    ``w`` gives it: :func:`choose`'s score, every play listed (the hard player's root shortlist
    ranks its moves by it; a play that puts down the last card scores above every other)."""
    seat = st.to_move
    hand = st.hands[seat] | GUARD
    size = st.counts[seat]
    danger = any(c <= w.danger for i, c in enumerate(st.counts) if i != seat)
    rows = rows_for(st.tables, w)[st.pile]
    out: dict[int, float] = {}
    for m, req, base, used, eight, n in rows:
        d = hand - req
        if d & GUARD != GUARD:
            continue
        if n == size:
            out[m] = -_NO_SCORE
            continue
        score = base - w.brk * (((d & used) + used) & GUARD).bit_count() if d & used else base
        if eight:
            score += w.e8near if danger or size - n <= w.near else -w.e8keep
        out[m] = score
    return out


#: typed, so that the compiled playout calls ``apply`` directly (``rules_for`` returns ``Any``)
_RULES: Final = Five35Rules()


def rollout(st: State, seed: int, w: Weights = MEDIUM, seats: tuple[Weights, ...] | None = None) -> None:
    """Play the round out in place, every seat with the policy of weights ``w`` (by default the
    medium player's), or seat ``i`` with ``seats[i]`` if given (the searcher's model of each
    player, :mod:`engine.ai.five35_style`); ties broken by a generator seeded with ``seed``: the
    same seed, the same playout."""
    rules = _RULES
    reqs = reqs_for(st.tables)
    x = seed & _MASK
    if seats is None:
        rows = rows_for(st.tables, w)
        while not st.over and not st.rounds:
            x = (x * _LCG_A + _LCG_C) & _MASK
            rules.apply(st, choose_with(st, rows, reqs, x, w))
        return
    per_seat = [rows_for(st.tables, sw) for sw in seats]
    while not st.over and not st.rounds:
        x = (x * _LCG_A + _LCG_C) & _MASK
        seat = st.to_move
        rules.apply(st, choose_with(st, per_seat[seat], reqs, x, seats[seat]))


#: the medium form with weights tuned by bench/five35_policy.py to *win* (coordinate search on
#: duplicate deals against three medium players): the hard player's playouts until issue 38
HARD: Final[Weights] = Weights(card=1.5, low=0.15, add=3.0, brk=2.5, e8near=2.5, e8keep=0.0, near=3,
                               danger=9, lead=-2.25, pass_t=-0.5)

#: the hard player's playouts (its own seat, and the seats it reads as searchers): the weights
#: whose choice agrees most often with the moves strong players made (bench/five35_fit.py: four
#: families of searchers, the hard player among them, 1,527 decisions): they break a group more
#: readily than HARD, lead sets more often, value a follow that wins the lead, and stop passing
#: once a seat has 5 cards or fewer.  They predict every searching family better than HARD (e.g.
#: 50.8% of pimc_race's moves against 41.7%) and, as a plain policy, beat it (32.6% against three
#: HARD players, fair 25%); figures in bench/results/league.txt
STRONG: Final[Weights] = Weights(card=1.5, low=0.15, add=3.5, brk=0.8333333333333334, e8near=2.5,
                                 e8keep=0.5, near=2, danger=5, lead=-1.25, pass_t=-0.5, win=0.25)


#: per (weights, jitter) (the id of a shared, read-only set), its copy with that jitter: a hard
#: player's settings name a handful of sets, so this stays bounded (and :func:`rows_for`'s cache,
#: keyed by the copy, with it)
_JITTERED: dict[tuple[int, float], tuple[Weights, Weights]] = {}


def jittered(w: Weights, amount: float) -> Weights:
    """``w`` with ``jitter`` set to ``amount`` (the same object for the same pair)."""
    key = (id(w), amount)
    hit = _JITTERED.get(key)
    if hit is not None and hit[0] is w:
        return hit[1]
    out = Weights(card=w.card, low=w.low, add=w.add, brk=w.brk, e8near=w.e8near, e8keep=w.e8keep,
                  near=w.near, danger=w.danger, lead=w.lead, pass_t=w.pass_t, win=w.win,
                  ranks=w.ranks, jitter=amount)
    _JITTERED[key] = (w, out)
    return out
