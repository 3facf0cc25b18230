"""The public API of the engine, the same for every game (see ``engine/__init__.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.errors import IllegalMove
from engine.rng import check_seed
from engine.rules import rules_for

# The arguments that this module checks itself are typed ``object``: the compiled engine (mypyc)
# checks annotated types on entry and would answer a wrong type with a TypeError of its own instead
# of the ValueError or IllegalMove promised here.


def new_game(game: str, *, players: object, seed: object = None,
             hands: Any = None, **options: Any) -> Any:
    """Start a match of ``game`` for ``players`` seats.

    ``seed`` (an int or a str) decides every deal of the match (C-8); ``None`` means seed 0, since
    the engine has no randomness of its own.  ``hands``, when given, fixes the first round's deal
    (one list of card codes per seat).  ``options`` are the game's options; an unknown option, a
    bad value or an impossible combination raises ``ValueError``.
    """
    rules = rules_for(game)
    if isinstance(players, bool) or not isinstance(players, int):
        raise ValueError("players must be an int")
    return rules.new(players, check_seed(0 if seed is None else seed), hands, dict(options))


def to_move(state: Any) -> int | None:
    """The seat to move, or ``None`` once the match is over."""
    return rules_for(state).to_move(state)


def legal_moves(state: Any) -> list[str]:
    """The legal moves of the seat to move, in canonical notation."""
    rules = rules_for(state)
    return [rules.encode(state, m) for m in rules.legal(state)]


def play(state: Any, move: object) -> Any:
    """Return the state after ``move``; ``state`` itself is left untouched.

    Raises :class:`IllegalMove` (with a ``code`` and a readable message) for a move that cannot be
    read or is not legal now, or when the match is over.
    """
    rules = rules_for(state)
    if rules.to_move(state) is None:
        raise IllegalMove("game_over", "the match is over")
    if not isinstance(move, str):
        raise IllegalMove("bad_notation", f"a move is a string, not {type(move).__name__}")
    m = rules.decode(state, move)
    if not rules.is_legal(state, m):
        raise rules.explain(state, m)
    new = rules.clone(state)
    rules.apply(new, m)
    return new


def view(state: Any, seat: object) -> dict[str, Any]:
    """What ``seat`` may know (G-1); ``seat=None`` is a spectator.  JSON-serialisable."""
    rules = rules_for(state)
    if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)
                             or not 0 <= seat < state.players):
        raise ValueError(f"no seat {seat!r} at this table")
    return rules.view(state, seat)


def views(state: Any, seats: Sequence[int | None]) -> list[dict[str, Any]]:
    """``[view(state, seat) for seat in seats]``, cheaper: the parts every seat may see are computed
    once and shared between the views, so treat them as read-only (a view is meant to be written
    out; copy one before changing it)."""
    rules = rules_for(state)
    for seat in seats:
        if seat is not None and (isinstance(seat, bool) or not isinstance(seat, int)
                                 or not 0 <= seat < state.players):
            raise ValueError(f"no seat {seat!r} at this table")
    many = getattr(rules, "views", None)
    if many is None:
        return [rules.view(state, seat) for seat in seats]
    out: list[dict[str, Any]] = many(state, seats)
    return out


def result(state: Any) -> dict[str, Any] | None:
    """Once the match is over: ``winners``, ``scores`` (and ``chips`` where played); else None."""
    return rules_for(state).result(state)


def snapshot(state: Any) -> dict[str, Any]:
    """A JSON-serialisable copy of the whole state (hidden cards included: never show it)."""
    return {"game": state.game, "state": rules_for(state).snapshot(state)}


def restore(data: dict[str, Any]) -> Any:
    """The state that :func:`snapshot` saved."""
    return rules_for(data["game"]).restore(data["state"])
