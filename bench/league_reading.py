"""How the hard player's 535 reading (engine/ai/five35_style.py) classes each league family's seats.

usage: python bench/league_reading.py [--rounds 6] [--iterations 20] [LEVEL ...]
       (default levels: pimc_race pimc_ucb ismcts medium)

Four seats of one level play one-round 535 games (seeds 1000..); from the 8th ply on, at every
4th ply, the seat to move reads every other seat from the public history as the hard player does
(:func:`engine.ai.five35_style.searcher_log_odds`).  Printed per level: the share of those readings
that take a seat for the medium player (log odds below 0), and for it strongly (below -2).  The
searchers run at a fixed iteration count (cheap), not at a time budget.
"""

from __future__ import annotations

import argparse
import pathlib
import random
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import engine
from bench.league import levels
from engine.ai import five35_style
from engine.ai.games import game_for


def readings(level: str, rounds: int, iterations: int) -> tuple[int, int, int]:
    """The readings taken, those below 0 (medium) and those below -2, over ``rounds`` games."""
    total = medium = strong = 0
    for r in range(rounds):
        state = engine.new_game("535", players=4, seed=1000 + r, target=1)
        ply = 0
        while (seat := engine.to_move(state)) is not None:
            view = engine.view(state, seat)
            if ply >= 8 and ply % 4 == 0:
                game = game_for(view, random.Random(1), heuristic_playouts=True)
                for s, c in enumerate(five35_style.counts(game.base)):
                    if s != seat:
                        odds = five35_style.searcher_log_odds(c)
                        total += 1
                        medium += odds < 0
                        strong += odds < -2
            state = engine.play(state, levels.decide(level, view, r * 1000 + ply, budget_ms=None,
                                                     iterations=iterations, clock=time_unused))
            ply += 1
    return total, medium, strong


def time_unused() -> float:
    """The clock of a decision without a time budget (never read)."""
    return 0.0


def main() -> None:
    """Print each level's share of seats read as the medium player."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("levels", nargs="*", default=["pimc_race", "pimc_ucb", "ismcts", "medium"])
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--iterations", type=int, default=20)
    args = ap.parse_args()
    for level in args.levels:
        total, medium, strong = readings(level, args.rounds, args.iterations)
        print(f"{level:<10} {total:>4} readings: medium {100 * medium / total:5.1f}%, "
              f"strongly medium (< -2) {100 * strong / total:5.1f}%")


if __name__ == "__main__":
    main()
