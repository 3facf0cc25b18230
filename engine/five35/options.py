"""The options of a 535 match and their validation.

Options (all optional, keyword arguments of ``engine.new_game("535", ...)``):

``points``
    A dict ``rank -> points`` replacing F-3's default values.  It must name every rank of the deck
    (1-5, 7-9, 11-15) exactly once, with non-negative int values (bool is refused), and at least one
    value must be positive (otherwise nobody ever scores and the match could never end, F-14).
``runs_low_beats_high``
    bool, default True (F-6): a run is beaten by a run starting lower.  False: by one starting higher.
``hand_size``
    int >= 1, default 13 (10 with 6 players) (F-2); ``players * hand_size`` must fit in the deck
    (52 cards with 2-4 players, 65 with 5-6).
``target``
    int >= 1, default 20 (F-14): the match ends after the round in which a score reaches it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.five35.cards import DEFAULT_POINTS, RANKS, copies, default_hand_size

KNOWN = ("points", "runs_low_beats_high", "hand_size", "target")


@dataclass(frozen=True, slots=True)
class Options:
    """Validated options in force; ``points`` is indexed by rank index (the order of RANKS)."""

    points: tuple[int, ...]
    runs_low_beats_high: bool
    hand_size: int
    target: int

    def public(self) -> dict[str, Any]:
        """The options as a JSON-serialisable dict (points keyed by the rank written as a str)."""
        return {
            "points": {str(r): p for r, p in zip(RANKS, self.points, strict=True)},
            "runs_low_beats_high": self.runs_low_beats_high,
            "hand_size": self.hand_size,
            "target": self.target,
        }


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_options(players: int, options: dict[str, Any]) -> Options:
    """Validate ``options`` for a table of ``players``; raise ValueError naming the bad option."""
    unknown = sorted(set(options) - set(KNOWN))
    if unknown:
        raise ValueError(f"unknown 535 option(s): {', '.join(unknown)}; the options are: "
                         f"{', '.join(KNOWN)}")

    raw_points = options.get("points", DEFAULT_POINTS)
    if not isinstance(raw_points, dict):
        raise ValueError("option points must be a dict rank -> points")
    bad_keys = [k for k in raw_points if not _is_int(k) or k not in RANKS]
    if bad_keys:
        raise ValueError(f"option points: {bad_keys[0]!r} is not a rank of the deck "
                         f"(the ranks are {', '.join(map(str, RANKS))})")
    missing = [r for r in RANKS if r not in raw_points]
    if missing:
        raise ValueError(f"option points must give every rank; missing: {', '.join(map(str, missing))}")
    for r in RANKS:
        v = raw_points[r]
        if not _is_int(v) or v < 0:
            raise ValueError(f"option points: rank {r} must be worth a non-negative int, not {v!r}")
    points = tuple(int(raw_points[r]) for r in RANKS)
    if not any(points):
        raise ValueError("option points: at least one rank must be worth points, "
                         "or no score ever grows and the match cannot end")

    low = options.get("runs_low_beats_high", True)
    if not isinstance(low, bool):
        raise ValueError(f"option runs_low_beats_high must be a bool, not {low!r}")

    hand_size = options.get("hand_size", default_hand_size(players))
    if not _is_int(hand_size) or hand_size < 1:
        raise ValueError(f"option hand_size must be an int >= 1, not {hand_size!r}")
    deck = copies(players) * len(RANKS)
    if players * hand_size > deck:
        raise ValueError(f"option hand_size: {players} players x {hand_size} cards do not fit "
                         f"in the {deck}-card deck (at most {deck // players} each)")

    target = options.get("target", 20)
    if not _is_int(target) or target < 1:
        raise ValueError(f"option target must be an int >= 1, not {target!r}")

    return Options(points=points, runs_low_beats_high=low, hand_size=hand_size, target=target)
