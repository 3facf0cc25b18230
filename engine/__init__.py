"""The rules of Cinquillo and 535: pure, deterministic, standard library only.

Public API (the same for every game)::

    state = engine.new_game("cinquillo", players=4, seed=7, preset="tradicional")
    engine.to_move(state)       # seat to move, None once over
    engine.legal_moves(state)   # ["5o"], ["4o", "6o", "pass"]...
    state = engine.play(state, "5o")   # new state; raises engine.IllegalMove
    engine.view(state, seat)    # what that seat may know (G-1)
    engine.views(state, [None, 0])  # several views at once, sharing their public parts
    engine.result(state)        # {"winners": [...], "scores": [...], ...} once over

``snapshot``/``restore`` save and load a whole state (for the service's snapshots).  The fast
path for playouts (integer moves, in place) is ``engine.rules_for(state)``; see
:mod:`engine.rules`.
"""

from engine import _native

# before any other engine module is imported: the compiled build, unless stale or CINQ_PURE_ENGINE
_native.select()

from engine import cinquillo as _cinquillo  # noqa: F401  (registers the game)
from engine import five35 as _five35  # noqa: F401  (registers the game)
from engine import rules as _rules
from engine.api import legal_moves, new_game, play, restore, result, snapshot, to_move, view, views
from engine.errors import IllegalMove
from engine.rng import SplitMix64
from engine.rules import Rules, games, rules_for

#: True when the mypyc-compiled engine is the one running (checked on a compiled module itself)
COMPILED: bool = _native.is_extension(_rules)

__all__ = [
    "COMPILED",
    "IllegalMove",
    "Rules",
    "SplitMix64",
    "games",
    "legal_moves",
    "new_game",
    "play",
    "restore",
    "result",
    "rules_for",
    "snapshot",
    "to_move",
    "view",
    "views",
]
