"""A round's result and the match's standings, as the structured part of a message.  Pure.

Every surface shows the same moment the same way: when a round ends, who went out or won it, what
each seat gained or paid, and the running score table; when the match ends, the final standings.
They are read from the **public** view (``engine.view(state, None)``: its finished rounds' records,
scores, chips and pot), so they show only what the rules make public at that moment (G-1): cards
left per seat, never which cards.

The outcome (JSON, ``Message.outcome``)::

    {"round": {"n", "end", "winners", "went_out", "cards_left", "points", "chips", "pot"} | None,
     "standings": {"scoring", "target", "lower_wins", "rows", "order", "pot", "teams",
                   "over", "winners"}}

At the end of a match whose deal is its own (no other table plays it: :mod:`service.domain.embargo`)
the notifier adds ``seed``, as the end's line shows it.

``rows`` are in seat order, each ``{"seat", "score", "shown", "rounds", "chips", "rank"}`` (``shown``:
the score as written, ``16½`` for cabrón's split points); ``order`` lists the seats best first.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

# Chips each player starts a match of pago with (C-9).
START_CHIPS = 10
_VULGAR = {(1, 2): "½", (1, 3): "⅓", (2, 3): "⅔", (1, 4): "¼", (3, 4): "¾", (1, 5): "⅕", (2, 5): "⅖",
           (3, 5): "⅗", (4, 5): "⅘", (1, 6): "⅙", (5, 6): "⅚", (1, 8): "⅛", (3, 8): "⅜", (5, 8): "⅝",
           (7, 8): "⅞", (1, 7): "⅐"}


def number(value: Any) -> Fraction:
    """A score as the engine writes it (an int, or ``"num/den"`` for cabrón's split points)."""
    if isinstance(value, str) and "/" in value:
        num, _, den = value.partition("/")
        return Fraction(int(num), int(den))
    return Fraction(value or 0)


def shown(value: Any) -> str:
    """A score as people write it: ``"33/2"`` -> ``"16½"``, ``"23/7"`` -> ``"3 2/7"``, ``5`` -> ``"5"``."""
    f = number(value)
    whole, rest = divmod(f.numerator, f.denominator)
    if rest == 0:
        return str(whole)
    part = _VULGAR.get((rest, f.denominator))
    if part is None:
        return f"{whole} {rest}/{f.denominator}" if whole else f"{rest}/{f.denominator}"
    return f"{whole}{part}" if whole else part


def round_ended(view: dict[str, Any]) -> bool:
    """Whether the view is the moment right after a round ended: a round was recorded and nobody has
    moved since (the next deal is on the table, untouched), or the match is over."""
    rounds = view.get("rounds") or []
    return bool(rounds) and (bool(view.get("over")) or not view.get("history"))


def outcome(view: dict[str, Any]) -> dict[str, Any]:
    """The outcome of the last round of ``view`` (None before any) and the standings now."""
    rounds = view.get("rounds") or []
    return {"round": _round(view, rounds) if rounds else None, "standings": standings(view)}


def _round(view: dict[str, Any], rounds: list[dict[str, Any]]) -> dict[str, Any]:
    last = rounds[-1]
    n = int(view.get("players") or len(last.get("cards_left") or []))
    went_out = last.get("went_out")
    winners = list(last.get("winners") or ([] if went_out is None else [went_out]))
    chips = None
    if last.get("chips") is not None:
        before = rounds[-2].get("chips") if len(rounds) > 1 else None
        before = before or [START_CHIPS] * n
        chips = [a - b for a, b in zip(last["chips"], before, strict=True)]
    points = last.get("points")
    return {"n": last.get("round", len(rounds)), "end": last.get("end", "out"), "winners": winners,
            "went_out": went_out, "cards_left": list(last.get("cards_left") or []),
            "points": None if points is None else [shown(p) for p in points],
            "chips": chips, "pot": last.get("pot_left")}


def standings(view: dict[str, Any]) -> dict[str, Any]:
    """The score table now: each seat's score (points or rounds won), chips, and rank."""
    game = view.get("game")
    n = int(view.get("players") or len(view.get("hand_sizes") or []))
    scores = list(view.get("scores") or [0] * n)
    if game == "535":
        scoring, target, lower = "points", (view.get("options") or {}).get("target"), True
        winners = (view.get("result") or {}).get("winners")
    else:
        scoring = view.get("scoring") or "points"
        lower = False
        target = view.get("target") if scoring == "points" else view.get("rounds_to_win")
        winners = view.get("winners")
    values = [number(s) for s in scores]
    rounds_won = view.get("round_wins")
    chips = view.get("chips")
    # Best first: the score (lowest in 535), then chips (they never decide the match, C-9, but
    # order a tie's rows), then the seat.
    order = sorted(range(n), key=lambda s: ((values[s] if lower else -values[s]),
                                            -(chips[s] if chips else 0), s))
    ranks = [0] * n
    for i, s in enumerate(order):
        prev = order[i - 1] if i else None
        ranks[s] = ranks[prev] if prev is not None and values[prev] == values[s] else i + 1
    rows = [{"seat": s, "score": scores[s], "shown": shown(scores[s]),
             "rounds": None if rounds_won is None else rounds_won[s],
             "chips": None if chips is None else chips[s], "rank": ranks[s]} for s in range(n)]
    return {"scoring": scoring, "target": target, "lower_wins": lower, "rows": rows, "order": order,
            "pot": view.get("pot"), "teams": view.get("teams"), "over": bool(view.get("over")),
            "winners": None if winners is None else list(winners)}
