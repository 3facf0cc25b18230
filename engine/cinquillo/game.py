"""The rules of a Cinquillo match on the fast path: new match, legal moves, apply, round ends.

``CinquilloRules`` implements :class:`engine.rules.Rules`.  Moves are ints: a card 0..39 or
``PASS`` (40).  ``legal`` is ``hands[turn] & playable`` walked bit by bit (``playable`` is kept up
to date by ``apply`` from precomputed per-suit tables), so a playout costs a few microseconds per
move.  Round ends (C-7, C-13), scoring (C-9, C-10, C-12) and the next deal happen inside ``apply``.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import Any

from engine.cinquillo.cards import (
    ADJACENT,
    CODES,
    FIVE_OROS,
    NOT_SUIT_MASK,
    OTHER_FIVES,
    OUTSIDE,
    PASS,
    RANGE,
    RANK_NAMES,
    SUIT_NAMES,
    codes_of,
    parse_card,
)
from engine.cinquillo.deal import deal_round, first_dealer, hands_from_lists
from engine.cinquillo.options import resolve
from engine.cinquillo.snapshot import restore, snapshot
from engine.cinquillo.state import CinquilloState, fraction_json, holder_of_five_oros
from engine.cinquillo.view import result, view, views
from engine.errors import IllegalMove
from engine.rng import Seed, seed_text

_PLAYED_AGAIN = (0, 9)  # rank indexes of the 1 and the Rey (C-11)
#: the round-win tallies as Fractions, built once: Fraction() is interpreted Python (~1 us each) and
#: every playout of a search ends a round; Fractions are immutable, so sharing them is safe
_WHOLE: tuple[Fraction, ...] = tuple(Fraction(i) for i in range(64))
#: canonical notation -> move, the public API's common case (what legal_moves gave), read at once
_BY_TEXT: dict[str, int] = {**{c: i for i, c in enumerate(CODES)}, "pass": PASS}


def _start_round(st: CinquilloState, hands: list[int]) -> None:
    st.hands = hands
    st.low = [-1, -1, -1, -1]
    st.high = [-1, -1, -1, -1]
    st.blocked = 0
    st.playable = 1 << FIVE_OROS
    st.history = []
    st.turn = holder_of_five_oros(hands)


def _end_round(st: CinquilloState, winners: list[int], end: str) -> None:
    """Score the round that just ended (C-7, C-9, C-10, C-12, C-13), then end the match or deal."""
    n = st.players
    opts = st.opts
    left = [h.bit_count() for h in st.hands]
    if opts.teams:
        half = n // 2
        team = winners[0] % half
        winners = [team, team + half]
        losers = [s for s in range(n) if s % half != team]
    else:
        losers = [s for s in range(n) if s not in winners]
    record: dict[str, Any] = {
        "round": st.round_index + 1, "end": end, "winners": winners, "cards_left": left,
        # the round's moves as the history holds them (seat << 6 | card, 40 a pass): the match's result
        # spells them out (view.rounds_copy), a view leaves them out (view.rounds_public); a playout's
        # round end, a snapshot and its restore stay cheap
        "moves": list(st.history),
    }
    if opts.deal == "tradicional":
        record["dealer"] = st.dealer
    round_wins = st.round_wins[:]
    for w in winners:
        round_wins[w] += 1
    st.round_wins = round_wins
    if opts.points:
        # partners both show the team's whole score (C-12); cabrón ties split it exactly (C-13)
        share = Fraction(sum(left[s] for s in losers), 1 if opts.teams else len(winners))
        scores = st.scores[:]
        for w in winners:
            scores[w] += share
        st.scores = scores
        won = fraction_json(share)
        record["points"] = [won if s in winners else 0 for s in range(n)]
    else:
        st.scores = [_WHOLE[w] if w < 64 else Fraction(w) for w in round_wins]
    if st.pay:
        each = st.pot // len(winners)
        taken = [each if s in winners else 0 for s in range(n)]
        st.chips = [c + t for c, t in zip(st.chips, taken, strict=True)]
        st.pot -= each * len(winners)
        record["pot_taken"] = taken
        record["chips"] = st.chips
        record["pot_left"] = st.pot
    st.rounds = [*st.rounds, record]
    tally = st.scores if opts.points else round_wins
    top = max(tally)
    goal = opts.target if opts.points else opts.rounds_to_win
    assert goal is not None
    if top >= goal:
        st.winners = [s for s in range(n) if tally[s] == top]
        st.turn = -1
        return
    st.round_index += 1
    st.dealer = (st.dealer + st.step) % n
    _start_round(st, deal_round(st.seed, n, st.round_index, opts.deal, st.dealer, st.step))


class CinquilloRules:
    """Cinquillo on the fast path (see :class:`engine.rules.Rules`)."""

    name = "cinquillo"

    def new(self, players: int, seed: Seed, hands: list[list[Any]] | None,
            options: dict[str, Any]) -> CinquilloState:
        """A new match; raises ValueError for bad options, seed or hands."""
        opts = resolve(players, options)
        seed_text(seed)  # raises ValueError for a seed that is neither int nor str
        st = CinquilloState.__new__(CinquilloState)
        st.game = self.name
        st.players = players
        st.seed = seed
        st.opts = opts
        st.step = 1 if opts.direction == "clockwise" else players - 1
        st.cabron = opts.cabron
        st.double_turn = opts.double_turn
        st.pay = opts.chips
        st.round_index = 0
        st.dealer = first_dealer(players)
        st.chips = [10] * players if opts.chips else [0] * players
        st.pot = 0
        st.scores = [Fraction(0)] * players
        st.round_wins = [0] * players
        st.rounds = []
        st.winners = None
        if hands is not None:
            masks = hands_from_lists(players, hands)
        else:
            masks = deal_round(seed, players, 0, opts.deal, st.dealer, st.step)
        _start_round(st, masks)
        return st

    def clone(self, state: CinquilloState) -> CinquilloState:
        """An independent copy of ``state``."""
        return state.clone()

    def to_move(self, state: CinquilloState) -> int | None:
        """The seat to move, or None once the match is over."""
        return None if state.turn < 0 else state.turn

    def legal(self, state: CinquilloState) -> list[int]:
        """The legal moves, cards ascending (suit o, c, e, b then rank), or ``[PASS]`` alone (C-5)."""
        t = state.turn
        if t < 0:
            return []
        m = state.hands[t] & state.playable
        if not m:
            return [PASS]
        out = []
        while m:
            b = m & -m
            out.append(b.bit_length() - 1)
            m ^= b
        return out

    def is_legal(self, state: CinquilloState, move: int) -> bool:
        """Whether ``move`` is in :meth:`legal`, from the masks alone (one check, no list)."""
        t = state.turn
        if t < 0:
            return False
        m = state.hands[t] & state.playable
        if move == PASS:
            return not m
        return 0 <= move < PASS and (m >> move) & 1 == 1

    def apply(self, state: CinquilloState, move: int) -> None:
        """Play ``move`` (taken from ``legal``) in place: C-4..C-7, C-9, C-11, C-13."""
        st = state
        seat = st.turn
        if move == PASS:
            if st.pay and st.chips[seat]:
                chips = st.chips[:]  # replaced, not mutated: clones share the list
                chips[seat] -= 1
                st.chips = chips
                st.pot += 1
            st.history.append(seat << 6 | PASS)
            st.turn = (seat + st.step) % st.players
            return
        hand = st.hands[seat] ^ (1 << move)
        st.hands[seat] = hand
        s = move // 10
        r = move - s * 10
        lo = st.low[s]
        if lo < 0:  # opening a suit with its 5
            lo = hi = r
            st.low[s] = st.high[s] = r
            if move == FIVE_OROS:
                st.playable |= OTHER_FIVES
        else:
            hi = st.high[s]
            if r > hi:
                if r > hi + 1:  # only cabrón jumps: the cards in between are blocked (C-13)
                    st.blocked |= RANGE[s * 100 + (hi + 1) * 10 + r - 1]
                hi = st.high[s] = r
            else:
                if r < lo - 1:
                    st.blocked |= RANGE[s * 100 + (r + 1) * 10 + lo - 1]
                lo = st.low[s] = r
        if st.cabron:
            st.playable = (st.playable & NOT_SUIT_MASK[s]) | OUTSIDE[s * 100 + lo * 10 + hi]
        else:
            st.playable = (st.playable & NOT_SUIT_MASK[s]) | ADJACENT[s * 100 + lo * 10 + hi]
        st.history.append(seat << 6 | move)
        if not hand:
            _end_round(st, [seat], "out")
        elif not st.playable:  # only in cabrón: nobody can move (every unplayed card is held)
            fewest = min(h.bit_count() for h in st.hands)
            _end_round(st, [p for p in range(st.players) if st.hands[p].bit_count() == fewest], "blocked")
        elif not (st.double_turn and r in _PLAYED_AGAIN and hand & st.playable):
            st.turn = (seat + st.step) % st.players

    def encode(self, state: CinquilloState, move: int) -> str:
        """``"pass"`` or the card's code."""
        return "pass" if move == PASS else CODES[move]

    def decode(self, state: CinquilloState, text: str) -> int:
        """The int of ``"pass"`` or a card code (spaces and case ignored); else ``bad_notation``."""
        if not isinstance(text, str):
            raise IllegalMove("bad_notation", f"a move is a string, not {type(text).__name__}",
                              text=repr(text))
        known = _BY_TEXT.get(text)
        if known is not None:
            return known
        if text.strip().lower() == "pass":
            return PASS
        parsed = parse_card(text)
        if isinstance(parsed, str):
            raise IllegalMove("bad_notation", parsed, text=text)
        return parsed

    def explain(self, state: CinquilloState, move: int) -> Exception:
        """Why ``move`` is illegal now (G-2): an IllegalMove with a code, a message and params."""
        st = state
        if st.turn < 0:
            return IllegalMove("game_over", "the match is over")
        seat = st.turn
        hand = st.hands[seat]
        if move == PASS:
            can = codes_of(hand & st.playable)
            return IllegalMove("cannot_pass", f"you cannot pass while you can play: {', '.join(can)}",
                               playable=can)
        if not 0 <= move < PASS:
            return IllegalMove("bad_notation", f"{move!r} is not a move")
        card = CODES[move]
        s, r = divmod(move, 10)
        if not hand >> move & 1:
            return IllegalMove("not_in_hand", f"you do not hold the {card}", card=card)
        if st.low[0] < 0:
            return IllegalMove("must_open_with_5o", "the round must open with the 5o (5 de oros)",
                               card=card)
        if st.blocked >> move & 1:
            return IllegalMove("blocked", f"the {card} is blocked this round: a card jumped over it",
                               card=card)
        suit = SUIT_NAMES[s]
        if st.low[s] < 0:
            five = CODES[s * 10 + 4]
            return IllegalMove("not_playable", f"the {card} cannot be played: {suit} is not open yet "
                               f"and only its 5 ({five}) can open it", card=card, suit=suit,
                               reason="suit_not_open", needed=[five])
        lo, hi = st.low[s], st.high[s]
        needed = codes_of(ADJACENT[s * 100 + lo * 10 + hi])
        wants = " or ".join(needed) if needed else "nothing more"
        return IllegalMove("not_playable", f"the {card} cannot be played: {suit} runs from "
                           f"{CODES[s * 10 + lo]} to {CODES[s * 10 + hi]}, so only {wants} can go "
                           f"there", card=card, suit=suit, reason="not_adjacent", needed=needed,
                           low=CODES[s * 10 + lo], high=CODES[s * 10 + hi], rank=RANK_NAMES[r])

    def view(self, state: CinquilloState, seat: int | None) -> dict[str, Any]:
        """What ``seat`` may know (G-1); see :func:`engine.cinquillo.view.view`."""
        return view(state, seat)

    def views(self, state: CinquilloState, seats: Sequence[int | None]) -> list[dict[str, Any]]:
        """The views of several seats, sharing their public parts; see :func:`engine.cinquillo.view.views`."""
        return views(state, seats)

    def result(self, state: CinquilloState) -> dict[str, Any] | None:
        """The match result once over; see :func:`engine.cinquillo.view.result`."""
        return result(state)

    def snapshot(self, state: CinquilloState) -> dict[str, Any]:
        """The whole state as JSON data; see :func:`engine.cinquillo.snapshot.snapshot`."""
        return snapshot(state)

    def restore(self, data: dict[str, Any]) -> CinquilloState:
        """The state saved by ``snapshot``."""
        return restore(data)
