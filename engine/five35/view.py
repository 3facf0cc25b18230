"""What one seat may see of a 535 match (G-1): its own hand, the table, hand sizes, scores and the
public history; never another hand, the out-of-play cards, the deck order or the seed (the seed
is shown only once the match is over, so that anyone can re-deal and check it, G-3)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engine.five35 import cards as D
from engine.five35.piles import KIND_NAMES, PILES, move_text, pile_cards
from engine.five35.state import State

if TYPE_CHECKING:
    from engine.five35.game import Five35Rules


def copy_round(r: dict[str, Any]) -> dict[str, Any]:
    """A copy of a finished round's result that shares no list with the state."""
    return {k: v[:] if isinstance(v, list) else v for k, v in r.items()}


def view(rules: Five35Rules, state: State, seat: int | None) -> dict[str, Any]:
    """The JSON-serialisable view of ``state`` for ``seat`` (None: a spectator).

    Keys: ``game``, ``seat``, ``players``, ``hand`` (own ranks ascending; None for a spectator),
    ``hand_sizes``, ``out_of_play`` (how many cards were dealt to nobody, not which), ``to_move``
    (None once over), ``legal_moves`` (only for the seat to move), ``scores``, ``round`` (1-based),
    ``dealer``, ``leader`` (who led this trick), ``last_player`` (who played last in it, None before
    the lead), ``passed`` (seats out of this trick), ``pile`` (``cards``, ``type``: single / group /
    run / None, ``size``), ``trick_moves`` and ``history`` (this round's moves, each ``{"seat",
    "move"}``), ``rounds`` (finished rounds' results), ``options``, ``over``, and once over
    ``result`` and ``seed``.
    """
    return views(rules, state, (seat,))[0]


def views(rules: Five35Rules, state: State, seats: Sequence[int | None]) -> list[dict[str, Any]]:
    """The :func:`view` of each of ``seats``, with the public parts computed once and shared
    between the views (read-only: a view is written out, never changed in place)."""
    s = state
    pile = PILES[s.pile]
    moves = [{"seat": h & 7, "move": move_text(h >> 3)} for h in s.history]
    to_move = None if s.over else s.to_move
    hand_sizes = s.counts[:]
    out_of_play = D.size(s.out)
    scores = s.scores[:]
    last_player = None if s.last < 0 else s.last
    passed = [i for i in range(s.players) if s.passed >> i & 1]
    pile_view = {
        "cards": [D.RANKS[i] for i in pile_cards(pile)],
        "type": KIND_NAMES[pile[0]],
        "size": pile[2],
    }
    trick_moves = moves[s.trick_start:]
    rounds = [copy_round(r) for r in s.rounds]
    options = s.options.public()
    result = rules.result(s) if s.over else None
    out = []
    for seat in seats:
        v: dict[str, Any] = {
            "game": s.game,
            "seat": seat,
            "players": s.players,
            "hand": None if seat is None else D.unpack(s.hands[seat]),
            "hand_sizes": hand_sizes,
            "out_of_play": out_of_play,
            "to_move": to_move,
            "legal_moves": ([rules.encode(s, m) for m in rules.legal(s)]
                            if seat is not None and seat == to_move else []),
            "scores": scores,
            "round": s.round_no + 1,
            "dealer": s.dealer,
            "leader": s.leader,
            "last_player": last_player,
            "passed": passed,
            "pile": pile_view,
            "trick_moves": trick_moves,
            "history": moves,
            "rounds": rounds,
            "options": options,
            "over": s.over,
        }
        if s.over:
            v["result"] = result
            v["seed"] = s.seed
        out.append(v)
    return out
