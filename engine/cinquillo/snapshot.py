"""Saving a whole Cinquillo state as JSON data and loading it back (hidden cards included)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from engine.cinquillo.cards import PASS, card, codes_of, mask_of
from engine.cinquillo.options import resolve
from engine.cinquillo.state import CinquilloState, playable_mask
from engine.cinquillo.view import rounds_public

# 2: a finished round's ``moves`` are stored as the state keeps them, history entries (seat << 6 |
# card, PASS a pass), not as [seat, code] pairs (version 1, still read): a long match's snapshot was
# mostly those pairs, thousands of small lists to parse on every load of its table.
VERSION = 2


def snapshot(st: CinquilloState) -> dict[str, Any]:
    """Every field of ``st`` as JSON data (cards as codes, scores as ``"7/2"``-style strings)."""
    return {
        "version": VERSION,
        "players": st.players,
        "seed": st.seed,
        "options": st.opts.as_dict(),
        "hands": [codes_of(h) for h in st.hands],
        "low": list(st.low),
        "high": list(st.high),
        "blocked": codes_of(st.blocked),
        "turn": st.turn,
        "round_index": st.round_index,
        "dealer": st.dealer,
        "chips": list(st.chips),
        "pot": st.pot,
        "scores": [str(f) for f in st.scores],
        "round_wins": list(st.round_wins),
        "history": list(st.history),
        "rounds": rounds_public(st, moves=True),
        "winners": None if st.winners is None else list(st.winners),
    }


def restore(data: dict[str, Any]) -> CinquilloState:
    """The state that :func:`snapshot` saved; raises ValueError for data it cannot read."""
    try:
        version = data["version"]
        if version not in (1, VERSION):
            raise ValueError(f"unknown cinquillo snapshot version {version!r}")
        players = data["players"]
        opts = resolve(players, data["options"])
        st = CinquilloState.__new__(CinquilloState)
        st.game = "cinquillo"
        st.players = players
        st.seed = data["seed"]
        st.opts = opts
        st.step = 1 if opts.direction == "clockwise" else players - 1
        st.cabron = opts.cabron
        st.double_turn = opts.double_turn
        st.pay = opts.chips
        st.hands = [mask_of(card(c) for c in h) for h in data["hands"]]
        st.low = [int(x) for x in data["low"]]
        st.high = [int(x) for x in data["high"]]
        st.blocked = mask_of(card(c) for c in data["blocked"])
        st.turn = int(data["turn"])
        st.round_index = int(data["round_index"])
        st.dealer = int(data["dealer"])
        st.chips = [int(x) for x in data["chips"]]
        st.pot = int(data["pot"])
        st.scores = [Fraction(x) for x in data["scores"]]
        st.round_wins = [int(x) for x in data["round_wins"]]
        st.history = [int(x) for x in data["history"]]
        # The finished rounds' records are never mutated (a new round replaces the list), and the
        # data is the caller's own (fresh from json.loads): taken as they are, without a copy.
        st.rounds = list(data["rounds"]) if version == VERSION else [_v1_round(r) for r in data["rounds"]]
        st.winners = None if data["winners"] is None else [int(x) for x in data["winners"]]
    except (KeyError, TypeError) as exc:
        raise ValueError(f"not a cinquillo snapshot: {exc}") from None
    st.playable = playable_mask(st)
    return st


def _v1_round(record: dict[str, Any]) -> dict[str, Any]:
    """A version 1 round record with its ``[seat, code]`` moves as history entries."""
    out = dict(record)
    out["moves"] = [int(seat) << 6 | (PASS if move == "pass" else card(move))
                    for seat, move in record["moves"]]
    return out
