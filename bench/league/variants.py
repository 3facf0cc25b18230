"""The variants a tournament plays: per game, named option sets for ``engine.new_game``.

Cinquillo (C-9..C-13): ``clasico`` (one round), ``parejas`` (teams, C-12; 4 or 6 seats),
``cabron`` (C-13, played in points to 20), ``doble`` (doble turno, C-11), ``chips`` (pago, C-9,
first to 3 rounds), ``puntaje`` (points to 20, C-10, over several rounds); with 5 or 6 seats the
``tradicional`` preset (the only one that seats them) with one round to win unless the variant
plays more.  535: ``round`` (one round: the first out wins, ``target=1``) and ``match`` (to 20
points, F-14).  A match with teams is won by both partners.
"""

from __future__ import annotations

from typing import Any

VARIANTS: dict[str, dict[str, dict[str, Any]]] = {
    "cinquillo": {
        "clasico": {},
        "parejas": {"teams": True},
        "cabron": {"cabron": True},
        "doble": {"double_turn": True},
        "chips": {"chips": True, "rounds_to_win": 3},
        "puntaje": {"points": True},
    },
    "535": {"round": {"target": 1}, "match": {"target": 20}},
}

#: the variant a game is played in when none is named
DEFAULT = {"cinquillo": "clasico", "535": "round"}


def options(game: str, variant: str, players: int) -> dict[str, Any]:
    """The ``engine.new_game`` options of ``variant`` of ``game`` at ``players`` seats."""
    try:
        opts = dict(VARIANTS[game][variant])
    except KeyError:
        known = ", ".join(VARIANTS.get(game, {}))
        raise ValueError(f"no variant {variant!r} of {game}; there are: {known}") from None
    if game == "cinquillo":
        opts["preset"] = "tradicional" if players > 4 else "clasico"
        if players > 4 and not ({"points", "cabron", "rounds_to_win"} & set(opts)):
            opts["rounds_to_win"] = 1
    return opts
