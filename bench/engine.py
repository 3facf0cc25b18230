"""Random-playout speed of the engine: moves per second on the fast path and on the public API.

Plays seeded random 4-player matches of each game and preset for a few seconds each, on one core,
and prints moves/s.  With ``--peers PYTHON`` it also runs ``../shared/bench/peer_engines.py`` (RLCard
UNO, OpenSpiel dou_dizhu and hearts) with that interpreter in the same run, so the figures can be
read as ratios on this noisy shared machine.  The peers need ``pip install rlcard open-spiel`` in a
scratch environment; they are not a dependency of the project.

usage: python bench/engine.py [--seconds S] [--peers /path/to/python]
"""

from __future__ import annotations

import argparse
import pathlib
import random
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import engine

CONFIGS = [
    ("cinquillo", {"preset": "clasico"}),
    ("cinquillo", {"preset": "tradicional"}),
    ("cinquillo", {"preset": "clasico", "cabron": True}),
    ("535", {}),
]


def fast_path(game: str, options: dict, seconds: float) -> tuple[float, float]:
    """Moves/s and matches/s of random playouts through ``engine.rules_for`` (integer moves)."""
    rules = engine.rules_for(game)
    rng = random.Random(1)
    moves = matches = 0
    seed = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        s = rules.new(4, seed, None, dict(options))
        legal, apply, to_move, choice = rules.legal, rules.apply, rules.to_move, rng.choice
        while to_move(s) is not None:
            apply(s, choice(legal(s)))
            moves += 1
        matches += 1
        seed += 1
    dt = time.perf_counter() - t0
    return moves / dt, matches / dt


def public_api(game: str, options: dict, seconds: float) -> tuple[float, float]:
    """Moves/s and matches/s of random playouts through the public string API."""
    rng = random.Random(1)
    moves = matches = 0
    seed = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        s = engine.new_game(game, players=4, seed=seed, **options)
        while engine.to_move(s) is not None:
            s = engine.play(s, rng.choice(engine.legal_moves(s)))
            moves += 1
        matches += 1
        seed += 1
    dt = time.perf_counter() - t0
    return moves / dt, matches / dt


def main() -> None:
    """Run every configuration and print a table (and the peers' figures when asked)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    ap.add_argument("--peers", metavar="PYTHON", help="interpreter with rlcard and open-spiel installed")
    args = ap.parse_args()
    print(f"{'game / options':40s} {'fast moves/s':>14s} {'api moves/s':>13s} {'fast matches/s':>15s}")
    for game, options in CONFIGS:
        fast, fast_matches = fast_path(game, options, args.seconds)
        api, _ = public_api(game, options, args.seconds)
        label = f"{game} {' '.join(f'{k}={v}' for k, v in options.items())}".strip()
        print(f"{label:40s} {fast:14,.0f} {api:13,.0f} {fast_matches:15,.1f}")
    if args.peers:
        peers = pathlib.Path(__file__).resolve().parents[2] / "shared" / "bench" / "peer_engines.py"
        print(f"\nreference engines in the same run ({peers}):", flush=True)
        subprocess.run([args.peers, str(peers)], check=False)


if __name__ == "__main__":
    main()
