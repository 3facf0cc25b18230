"""The hard player: what it is made of (:class:`HardSettings`) and its move (:func:`hard_move`).

* 535: determinized Monte Carlo over every legal move on shared deals (:mod:`.five35_pimc`), each
  move played out to the end of the round with a policy of the medium player's form per seat
  (:mod:`.five35_playout`): for its own seat the weights fitted to strong players' moves
  (``five35_own``, :data:`.five35_playout.STRONG`; issue 38: the weights tuned to beat medium,
  ``HARD``, lost to searchers written apart from hard; but ``five35_own_medium``, HARD's, when
  every other seat reads as the medium player, whom HARD's weights beat best: :func:`own_weights`),
  for each other seat a model chosen by how that seat has played this round (:mod:`.five35_style`,
  ``five35_reading``, which may draw the models per deal and keep a share of them plain, issue
  38's robust play); as many deals as the time budget allows, up to ``five35_iterations``;
  ``five35_shortlist`` (the own policy's k best plays, 0: every move) and ``five35_race_z``
  (moves trailing by that many standard errors dropped, 0: none) narrow the moves searched, and
  ``five35_overrule_z`` keeps the own playout policy's move unless the search beats it by that
  many standard errors (0: the best mean is played); ``five35_jitter`` plays the seats not read
  as medium (the own seat too) out with noisy scores (:class:`.five35_playout.Weights`);
  ``five35_shaping`` scores a played-out round the hard player loses by that share of its standing
  (fewer points than the others), not 0 (:class:`.outcome.Five35Outcome`; measured in issue 38's
  sixth pass: it cost points against pimc_race, so it stays 0); ``five35_belief`` > 0 weighs each
  deal by how well it explains the other seats' moves under their models, at that inverse
  temperature (:mod:`.five35_belief`; measured in the same pass, no gain found, so it stays 0);
  ``five35_safe`` > 0 plays every deal out with the plain model too (``five35_own`` for every
  seat) and keeps to the moves within that much of its best there (:func:`.five35_pimc.choose`).
  ``five35_endgame`` > 0 searches each deal's end exactly once no more than that many cards are
  left in all hands (:mod:`.five35_endgame`; ``five35_endgame_nodes`` positions at most a deal,
  ``five35_endgame_own``: only the own seat searches; measured in the tenth pass, no gain, so 0).
  The reading and the own seat's switch apply from ``five35_read_from`` seats on: a table of
  fewer (two seats) is played out with the plain model, every seat with ``five35_own`` (issue 38's
  tenth pass, at 100 ms with 2 seats: +10.3 points against pimc_race, where the reading had kept
  hard below the fair share, +5 against pimc_ucb and ismcts, for 9.6 of its 97.2% against medium).
  ``five35_own_tree`` > 0 searches the own seat's next that many decisions in each playout
  (:mod:`.five35_owntree`: an open-loop tree per root move, ``five35_own_widen`` and
  ``five35_own_c`` its widening and exploration; 0: the policy plays them).  The hard player
  searches its next two (issue 38's thirteenth pass, at 100 ms with 4 seats, paired on the same
  deals: about 7 points more against pimc_race and 4 more against medium; in the fourteenth pass
  ahead by the estimate at 2, 3, 5 and 6 seats, clearly by 5 points with 5 seats and at the mixed
  table).
* Cinquillo: SO-ISMCTS (:mod:`.ismcts`) with the medium player as playout policy, over deals
  weighted by how likely the others' plays are under a model of the medium player
  (:mod:`.cinquillo_belief`, ``cinquillo_belief_pool`` deals at ``cinquillo_belief_beta``; a
  ``cinquillo_belief_plain`` share of the deals drawn unweighted instead, issue 38's robust play); it
  plays the medium player's card unless the search finds a better one by ``cinquillo_overrule_z``
  standard errors (when the search cannot tell two cards apart, the heuristic's reasons are the
  better guide).

:data:`HARD` is the player the service runs; ``bench/tournament.py`` measures it and varies its
settings (``hard/<field>=<value>``), the figures behind each choice in ``bench/results/``.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from engine.ai import cinquillo_belief, five35_pimc, five35_playout, five35_style
from engine.ai.games import Five35Game, game_for
from engine.ai.ismcts import best_move, confident_move, search_stats
from engine.five35.state import State as Five35State

#: the share of a time budget the search may plan on (the rest absorbs a step's overrun)
BUDGET_SHARE: Final = 0.97


@dataclass(frozen=True, slots=True)
class HardSettings:
    """The hard player's settings, per game (see the module docstring).

    ``*_iterations`` cap a decision's search (535: deals, on each of which every move is played
    out; Cinquillo: tree iterations); with a time budget whichever comes first stops it.  535's cap
    is high so that the budget stops nearly every decision: the first decisions of a round, with
    many moves, cost far more a deal than the last.
    """

    cinquillo_iterations: int = 300
    cinquillo_belief_pool: int = 200
    cinquillo_belief_beta: float = cinquillo_belief.BETA
    cinquillo_belief_plain: float = 0.0
    cinquillo_overrule_z: float | None = 1.5
    five35_iterations: int = 5000
    five35_own: five35_playout.Weights = five35_playout.STRONG
    five35_own_medium: five35_playout.Weights | None = five35_playout.HARD
    five35_own_medium_below: float = 0.0
    five35_reading: five35_style.Reading = five35_style.READING
    five35_shortlist: int = 0
    five35_race_z: float = 0.0
    five35_overrule_z: float = 0.0
    five35_jitter: float = 0.0
    five35_shaping: float = 0.0
    five35_belief: float = 0.0
    five35_safe: float = 0.0
    five35_read_from: int = 3
    five35_endgame: int = 0
    five35_endgame_nodes: int = 4000
    five35_endgame_own: bool = False
    five35_own_tree: int = 2
    five35_own_widen: float = 0.5
    five35_own_c: float = 0.5

    def iterations(self, game: str) -> int:
        """The iteration cap of ``game`` ("cinquillo" or "535")."""
        return self.cinquillo_iterations if game == "cinquillo" else self.five35_iterations


#: the hard player the service runs
HARD: Final[HardSettings] = HardSettings()


def own_weights(st: Five35State, seat: int, settings: HardSettings = HARD) -> five35_playout.Weights:
    """The 535 playout weights of the hard player's own seat ``seat``: ``five35_own_medium`` when
    it is set and every other seat reads as the medium player (log odds below
    ``five35_own_medium_below``, whatever threshold the reading models the seats with), else
    ``five35_own``."""
    if (settings.five35_own_medium is not None
            and five35_style.all_read_medium(st, seat, settings.five35_reading,
                                             settings.five35_own_medium_below)):
        return settings.five35_own_medium
    return settings.five35_own


def five35_models(game: Five35Game, settings: HardSettings = HARD) -> None:
    """Set up ``game`` (the seat to move's) as the hard player searches it: its own seat's playout
    weights, each other seat's model read from this round's moves (or drawn per deal; with fewer
    than ``five35_read_from`` seats, none: every seat plays out with the own weights), the exact
    ends, the reward's shaping and the deals' weighing."""
    reading, seat = settings.five35_reading, game.info.seat
    game.endgame_cards = settings.five35_endgame
    game.endgame_nodes = settings.five35_endgame_nodes
    game.endgame_own = settings.five35_endgame_own
    if game.base.players < settings.five35_read_from:  # the plain model: every seat as the own
        game.seat_weights = game.seat_models = None   # (game.weights, set by game_for)
    else:
        own = own_weights(game.base, seat, settings)
        game.seat_weights = five35_style.seat_weights(game.base, seat, own, reading)
        if settings.five35_jitter > 0.0:  # every seat not modelled as the medium player, noisy
            game.seat_weights = tuple(
                w if w is five35_playout.MEDIUM else five35_playout.jittered(w, settings.five35_jitter)
                for w in game.seat_weights)
        game.seat_models = five35_style.seat_models(game.base, seat, own, reading)
    game.outcome.shaping = settings.five35_shaping
    game.belief_beta = settings.five35_belief
    if settings.five35_safe > 0.0:  # safe play: the plain model is every seat played as STRONG
        game.plain_weights = (settings.five35_own,) * game.base.players


def hard_move(view: dict[str, Any], rng: random.Random, *, settings: HardSettings = HARD,
              budget_s: float | None = None, started: float = 0.0, iterations: int | None = None,
              clock: Callable[[], float] | None = None) -> str:
    """The hard player's move from a seat's ``view`` with two or more legal moves: within
    ``budget_s`` seconds from ``started`` on ``clock`` (if given; the time the set-up takes comes
    off the search's) and ``iterations`` (by default the settings' cap when there is no budget)."""
    cinquillo = view["game"] == "cinquillo"
    game = game_for(view, rng, heuristic_playouts=True,
                    belief_pool=settings.cinquillo_belief_pool if cinquillo else 0,
                    belief_beta=settings.cinquillo_belief_beta,
                    belief_plain=settings.cinquillo_belief_plain, weights=settings.five35_own)
    rules: Any = game.rules  # either game's rules: the calls below are the protocol's
    if iterations is None and budget_s is None:
        iterations = settings.iterations(view["game"])
    if budget_s is not None and clock is not None:
        budget_s -= clock() - started
    if isinstance(game, Five35Game):
        five35_models(game, settings)
        return str(rules.encode(game.base, five35_pimc.choose(
            game, rng, iterations=iterations, budget_s=budget_s, clock=clock,
            top=settings.five35_shortlist, race_z=settings.five35_race_z,
            overrule_z=settings.five35_overrule_z, safe=settings.five35_safe,
            own_tree=(settings.five35_own_tree, settings.five35_own_widen, settings.five35_own_c))))
    root_moves = rules.legal(game.base)
    z = settings.cinquillo_overrule_z
    default = game.medium(rng) if z is not None else -1
    stats = search_stats(game, root_moves, rng, iterations=iterations, budget_s=budget_s, clock=clock)
    if z is not None:
        return str(rules.encode(game.base, confident_move(stats, default, z)))
    return str(rules.encode(game.base, best_move({m: n for m, (n, _) in stats.items()})))
