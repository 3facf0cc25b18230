"""The contract every game module implements: the fast path, and the registry of games.

A game module (``engine.cinquillo``, ``engine.five35``) exposes one object satisfying
:class:`Rules`.  Its methods work on the game's own mutable state class with *integer* moves, and
``apply`` changes the state in place without checking legality: that is the fast path that bots
and benchmarks use for playouts (clone once, then apply/legal in a loop).  The public API in
:mod:`engine.api` is built on it: it clones, parses the notation, checks legality and explains
refusals.
"""

from __future__ import annotations

from typing import Any, Protocol


class State(Protocol):
    """What every game state has: the game's registry name and its number of seats."""

    game: str
    players: int


class Rules(Protocol):
    """One game's rules, on integer moves (the fast path)."""

    name: str

    def new(self, players: int, seed: int | str, hands: list[list[Any]] | None,
            options: dict[str, Any]) -> Any:
        """A new match; raises ValueError for bad options or hands."""
        ...

    def clone(self, state: Any) -> Any:
        """An independent copy of ``state``."""
        ...

    def to_move(self, state: Any) -> int | None:
        """The seat to move, or None when the match is over."""
        ...

    def legal(self, state: Any) -> list[int]:
        """The legal integer moves of the seat to move (empty when the match is over)."""
        ...

    def is_legal(self, state: Any, move: int) -> bool:
        """Whether ``move`` is in ``legal(state)`` (the public API checks one move without listing all)."""
        ...

    def apply(self, state: Any, move: int) -> None:
        """Apply a legal integer move in place (no check: the caller took it from ``legal``)."""
        ...

    def encode(self, state: Any, move: int) -> str:
        """The canonical notation of an integer move."""
        ...

    def decode(self, state: Any, text: str) -> int:
        """The integer move for a notation; raises IllegalMove("bad_notation") when unreadable."""
        ...

    def explain(self, state: Any, move: int) -> Exception:
        """An IllegalMove saying why ``move`` is not legal now (only called for illegal moves)."""
        ...

    def view(self, state: Any, seat: int | None) -> dict[str, Any]:
        """What ``seat`` may know (G-1); ``None`` is a spectator."""
        ...

    def result(self, state: Any) -> dict[str, Any] | None:
        """The match result once over, else None."""
        ...

    def snapshot(self, state: Any) -> dict[str, Any]:
        """A JSON-serialisable dict from which ``restore`` rebuilds an equal state."""
        ...

    def restore(self, data: dict[str, Any]) -> Any:
        """The state saved by ``snapshot``."""
        ...


_GAMES: dict[str, Rules] = {}


def register(rules: Rules) -> Rules:
    """Add a game to the registry (done once by each game module at import)."""
    _GAMES[rules.name] = rules
    return rules


def rules_for(game_or_state: str | Any) -> Rules:
    """The rules object of a game name or of a state: the entry point of the fast path."""
    name = game_or_state if isinstance(game_or_state, str) else getattr(game_or_state, "game", None)
    try:
        return _GAMES[name]  # type: ignore[index]
    except KeyError:
        known = ", ".join(sorted(_GAMES))
        raise ValueError(f"unknown game {name!r}; the games are: {known}") from None


def games() -> list[str]:
    """The names of the registered games."""
    return sorted(_GAMES)
