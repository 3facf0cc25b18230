"""What a seat may see (G-1) and the match result, as JSON-serialisable dicts.

Scores are exact: an int when whole, else a string ``"num/den"`` (``"7/2"``: only cabrón ties
split points into fractions, C-13).  A view never holds another seat's cards, the deck order or
the seed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.cinquillo.cards import CODES, SUITS, codes_of
from engine.cinquillo.state import CinquilloState, fraction_json, teams_list

_MOVE_CODES = (*CODES, "pass")  # index PASS (40) is a pass
_MOVE_TEXT: tuple[str, ...] = (*_MOVE_CODES, *([""] * 23))  # any 6 bits (a history entry's card)


def _history(st: CinquilloState) -> list[dict[str, Any]]:
    return [{"seat": h >> 6, "move": _MOVE_CODES[h & 63]} for h in st.history]


def view(st: CinquilloState, seat: int | None) -> dict[str, Any]:
    """The table as ``seat`` sees it (``None``: a spectator, who sees no hand).

    Keys: ``game``, ``seat``, ``players``, ``hand`` (own cards, None for a spectator),
    ``hand_sizes``, ``to_move``, ``legal_moves`` (empty unless ``seat`` is to move), ``extra_turn``
    (the seat to move is playing again after a 1 or a Rey, C-11), ``scores`` and ``scoring``
    (``"points"`` or ``"round_wins"``: what ``scores`` counts), ``target``, ``rounds_to_win``,
    ``round_wins``, ``round`` (1-based), ``over``, ``winners`` (None until over), ``table`` (per suit
    letter ``{"low": code, "high": code}`` or None while closed), ``blocked`` (cabrón's blocked
    cards), ``chips`` and ``pot`` (None without pago), ``teams`` (lists of seats, or None),
    ``direction``, ``dealer`` (None with the clasico deal, which has no dealer), ``history`` (this
    round's moves: ``{"seat", "move"}``), ``last_move``, ``options`` and ``rounds`` (the finished
    rounds' public records: winners, cards left per seat, points, chips; not their moves, which the
    match's :func:`result` holds: every message of a long match carried them all, ~93% of its bytes
    late in a 60-point match of six).
    """
    return views(st, (seat,))[0]


def views(st: CinquilloState, seats: Sequence[int | None]) -> list[dict[str, Any]]:
    """The :func:`view` of each of ``seats``, with the public parts computed once and shared
    between the views (read-only: a view is written out, never changed in place)."""
    opts = st.opts
    over = st.turn < 0
    to_move = None if over else st.turn
    history = _history(st)
    hand_sizes = [h.bit_count() for h in st.hands]
    extra_turn = bool(not over and st.history and st.history[-1] >> 6 == st.turn)
    scores = [fraction_json(f) for f in st.scores]
    scoring = "points" if opts.points else "round_wins"
    round_wins = list(st.round_wins)
    winners = None if st.winners is None else list(st.winners)
    table = {SUITS[s]: None if st.low[s] < 0 else
             {"low": CODES[s * 10 + st.low[s]], "high": CODES[s * 10 + st.high[s]]}
             for s in range(4)}
    blocked = codes_of(st.blocked)
    chips = list(st.chips) if st.pay else None
    pot = st.pot if st.pay else None
    teams = teams_list(st)
    dealer = st.dealer if opts.deal == "tradicional" else None
    last_move = history[-1] if history else None
    options = opts.as_dict()
    rounds = rounds_public(st)
    out = []
    for seat in seats:
        legal: list[str] = []
        if seat is not None and seat == to_move:
            legal = codes_of(st.hands[seat] & st.playable) or ["pass"]
        out.append({
            "game": st.game,
            "seat": seat,
            "players": st.players,
            "hand": None if seat is None else codes_of(st.hands[seat]),
            "hand_sizes": hand_sizes,
            "to_move": to_move,
            "legal_moves": legal,
            "extra_turn": extra_turn,
            "scores": scores,
            "scoring": scoring,
            "target": opts.target,
            "rounds_to_win": opts.rounds_to_win,
            "round_wins": round_wins,
            "round": st.round_index + 1,
            "over": over,
            "winners": winners,
            "table": table,
            "blocked": blocked,
            "chips": chips,
            "pot": pot,
            "teams": teams,
            "direction": opts.direction,
            "dealer": dealer,
            "history": history,
            "last_move": last_move,
            "options": options,
            "rounds": rounds,
        })
    return out


def rounds_copy(st: CinquilloState) -> list[dict[str, Any]]:
    """The finished rounds' records for the match's result: each record and its lists copied one level
    down, and its ``moves`` (kept as the history keeps them) spelled out as ``[seat, code]`` pairs, so
    that nothing in the result aliases the state.  Much cheaper than ``copy.deepcopy``."""
    text = _MOVE_TEXT
    return [{k: [[h >> 6, text[h & 63]] for h in v] if k == "moves" else v[:] if isinstance(v, list) else v
             for k, v in r.items()} for r in st.rounds]


def rounds_public(st: CinquilloState, *, moves: bool = False) -> list[dict[str, Any]]:
    """The finished rounds' records as a view shows them, copied one level down: without their moves
    (``moves=True``: with them, as the state keeps them, history entries: what a snapshot stores)."""
    return [{k: v[:] if isinstance(v, list) else v for k, v in r.items() if moves or k != "moves"}
            for r in st.rounds]


def result(st: CinquilloState) -> dict[str, Any] | None:
    """Once over: ``winners`` (every seat of a winning team), ``scores``, ``scoring``,
    ``round_wins``, ``rounds`` (the public record of every round), ``teams``, and ``chips``/``pot``
    when pago is played (chips never decide the winner, C-9).  None while the match goes on."""
    if st.winners is None:
        return None
    out: dict[str, Any] = {
        "winners": list(st.winners),
        "scores": [fraction_json(f) for f in st.scores],
        "scoring": "points" if st.opts.points else "round_wins",
        "round_wins": list(st.round_wins),
        "rounds": rounds_copy(st),
        "teams": teams_list(st),
    }
    if st.pay:
        out["chips"] = list(st.chips)
        out["pot"] = st.pot
    return out
