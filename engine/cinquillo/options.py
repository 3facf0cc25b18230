"""Cinquillo's options, its two presets and their validation.

The presets (RULES.md, "Rulesets") set defaults; every option given explicitly overrides them:

============== ============================ ===========================================
option         ``clasico`` (default)        ``tradicional``
============== ============================ ===========================================
players        2-4                          2-6
direction      ``"clockwise"``              ``"counterclockwise"``
deal           ``"clasico"``                ``"tradicional"`` (see :mod:`.deal`)
rounds_to_win  1 (one round)                5
============== ============================ ===========================================

Variants (all default ``False``): ``chips`` (C-9 pago), ``points`` (C-10 puntaje, with ``target``,
default 20), ``double_turn`` (C-11), ``teams`` (C-12 parejas, 4 or 6 players), ``cabron`` (C-13).

How the match ends (choice, RULES.md leaves the interaction open): with ``points`` or ``cabron`` the
match is played to ``target`` points and the preset's ``rounds_to_win`` does not apply; giving
``rounds_to_win`` explicitly together with ``points``/``cabron`` is a contradiction (ValueError), and
so is ``target`` without ``points``/``cabron`` (it would be ignored) and ``points=False`` with
``cabron`` (cabrón is always scored in points, C-13).  Otherwise the match ends when a player (or
team) has won ``rounds_to_win`` rounds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

PRESETS: dict[str, dict[str, Any]] = {
    "clasico": {"players": (2, 4), "direction": "clockwise", "deal": "clasico", "rounds_to_win": 1},
    "tradicional": {"players": (2, 6), "direction": "counterclockwise", "deal": "tradicional",
                    "rounds_to_win": 5},
}
DIRECTIONS = ("clockwise", "counterclockwise")
DEALS = ("clasico", "tradicional")
_BOOLS = ("chips", "points", "double_turn", "teams", "cabron")
KNOWN = ("preset", "direction", "deal", "target", "rounds_to_win", *_BOOLS)
MAX_TARGET = 10_000
MAX_ROUNDS = 1_000


@dataclass(frozen=True, slots=True)
class Options:
    """The options in force for a match, all resolved (immutable, shared between clones).

    ``rounds_to_win`` is None when the match is played to ``target`` points (``points_mode``), and
    ``target`` is None when it is played in round wins.  ``cabron`` implies ``points``.
    """

    preset: str
    direction: str
    deal: str
    chips: bool
    points: bool
    double_turn: bool
    teams: bool
    cabron: bool
    target: int | None
    rounds_to_win: int | None

    @property
    def points_mode(self) -> bool:
        """True when the match is decided by points (C-10, C-13), else by round wins."""
        return self.points

    def as_dict(self) -> dict[str, Any]:
        """The options as a JSON-serialisable dict (``resolve(players, as_dict())`` gives them back)."""
        return {"preset": self.preset, "direction": self.direction, "deal": self.deal,
                "chips": self.chips, "points": self.points, "double_turn": self.double_turn,
                "teams": self.teams, "cabron": self.cabron, "target": self.target,
                "rounds_to_win": self.rounds_to_win}


def _choice(options: dict[str, Any], name: str, allowed: tuple[str, ...], default: str) -> str:
    value = options.get(name, default)
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"option {name!r} must be one of {', '.join(allowed)}, not {value!r}")
    return value


def _int(options: dict[str, Any], name: str, low: int, high: int) -> int | None:
    if name not in options or options[name] is None:
        return None
    value = options[name]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"option {name!r} must be an int, not {type(value).__name__}")
    if not low <= value <= high:
        raise ValueError(f"option {name!r} must be between {low} and {high}, not {value}")
    return value


def resolve(players: int, options: dict[str, Any]) -> Options:
    """Validate ``options`` for ``players`` seats and fill in the preset's defaults.

    Raises ValueError naming the option for an unknown option, a value of the wrong type (a bool is
    not an int) or out of range, or an impossible combination.  ``None`` for ``target`` or
    ``rounds_to_win`` means "not given" (so that ``Options.as_dict`` round-trips).
    """
    unknown = sorted(set(options) - set(KNOWN))
    if unknown:
        raise ValueError(f"unknown option(s) {', '.join(map(repr, unknown))}; the options are: "
                         f"{', '.join(KNOWN)}")
    preset_name = _choice(options, "preset", tuple(PRESETS), "clasico")
    preset = PRESETS[preset_name]
    if isinstance(players, bool) or not isinstance(players, int):
        raise ValueError("players must be an int")
    low, high = preset["players"]
    if not low <= players <= high:
        raise ValueError(f"preset {preset_name!r} is for {low} to {high} players, not {players}")
    direction = _choice(options, "direction", DIRECTIONS, preset["direction"])
    deal = _choice(options, "deal", DEALS, preset["deal"])
    if deal == "clasico" and players > 4:
        raise ValueError(f"option 'deal' 'clasico' is defined for 2 to 4 players, not {players}")
    flags: dict[str, bool] = {}
    for name in _BOOLS:
        value = options.get(name, False)
        if not isinstance(value, bool):
            raise ValueError(f"option {name!r} must be true or false, not {value!r}")
        flags[name] = value
    target = _int(options, "target", 1, MAX_TARGET)
    rounds = _int(options, "rounds_to_win", 1, MAX_ROUNDS)
    if flags["teams"] and players not in (4, 6):
        raise ValueError(f"option 'teams' needs 4 or 6 players, not {players}")
    if flags["teams"] and flags["cabron"]:
        raise ValueError("option 'cabron' cannot be combined with option 'teams'")
    if flags["cabron"] and options.get("points") is False:
        raise ValueError("option 'cabron' is always scored in points: 'points' cannot be false")
    flags["points"] = points_mode = flags["points"] or flags["cabron"]
    if points_mode:
        if rounds is not None:
            raise ValueError("option 'rounds_to_win' contradicts 'points'/'cabron': "
                             "those matches are played to 'target' points")
        target = 20 if target is None else target
    else:
        if target is not None:
            raise ValueError("option 'target' only applies with 'points' or 'cabron'")
        rounds = preset["rounds_to_win"] if rounds is None else rounds
    return Options(preset=preset_name, direction=direction, deal=deal, target=target,
                   rounds_to_win=rounds, **flags)
