"""Saving a whole 535 state as JSON data and loading it back (hidden cards included)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from engine.five35 import cards as D
from engine.five35.options import parse_options
from engine.five35.piles import PILE_ID, PILES, move_text, pile_cards_ranks, shape, tables_for
from engine.five35.state import State
from engine.five35.view import copy_round

if TYPE_CHECKING:
    from engine.five35.game import Five35Rules

VERSION = 1


def snapshot(s: State) -> dict[str, Any]:
    """Every field of ``s`` as JSON data (cards as ranks, moves as text: never show it)."""
    return {
        "version": VERSION,
        "players": s.players,
        "seed": s.seed,
        "options": s.options.public(),
        "hands": [D.unpack(h) for h in s.hands],
        "played": D.unpack(s.played),
        "out": D.unpack(s.out),
        "pile": pile_cards_ranks(PILES[s.pile]),
        "leader": s.leader,
        "last": s.last,
        "passed": [i for i in range(s.players) if s.passed >> i & 1],
        "to_move": s.to_move,
        "dealer": s.dealer,
        "round_no": s.round_no,
        "scores": s.scores[:],
        "history": [[h & 7, move_text(h >> 3)] for h in s.history],
        "trick_start": s.trick_start,
        "rounds": [copy_round(r) for r in s.rounds],
        "over": s.over,
    }


def restore(rules: Five35Rules, data: dict[str, Any]) -> State:
    """The state that :func:`snapshot` saved (``rules`` decodes its history's moves)."""
    players = data["players"]
    raw = dict(data["options"])
    raw["points"] = {int(k): v for k, v in raw["points"].items()}
    opts = parse_options(players, raw)
    s = State.__new__(State)
    s.game = "535"
    s.players = players
    s.seed = data["seed"]
    s.options = opts
    s.tables = tables_for(players, opts.runs_low_beats_high)
    s.hands = [D.pack(h) for h in data["hands"]]
    s.counts = [len(h) for h in data["hands"]]
    s.played = D.pack(data["played"])
    s.out = D.pack(data["out"])
    pile = shape(tuple(D.RANK_INDEX[r] for r in data["pile"]))
    s.pile = 0 if pile is None else PILE_ID[pile]
    s.leader = data["leader"]
    s.last = data["last"]
    s.passed = sum(1 << i for i in data["passed"])
    s.in_trick = players - len(data["passed"])
    s.to_move = data["to_move"]
    s.dealer = data["dealer"]
    s.round_no = data["round_no"]
    s.scores = list(data["scores"])
    s.history = [rules.decode(s, text) * 8 + seat for seat, text in data["history"]]
    s.trick_start = data["trick_start"]
    s.rounds = list(data["rounds"])  # the caller's own data (fresh from JSON); records never mutated
    s.over = data["over"]
    return s
