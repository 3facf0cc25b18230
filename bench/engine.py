"""Random-playout speed of the engine: moves per second on the fast path and on the public API.

Plays seeded random 4-player matches of each game and preset for a few seconds each, on one core,
and prints moves/s, then the hard AI's search iterations per second.  It measures the engine this
process loads (the compiled one when built, see ``engine/_native.py``), then, unless ``--one``, the
pure-Python engine in a child process (``CINQ_PURE_ENGINE=1``) in the same run.  With ``--peers
PYTHON`` it also runs ``../shared/bench/peer_engines.py`` (RLCard UNO, OpenSpiel dou_dizhu and
hearts) with that interpreter, so the figures can be read as ratios on this noisy shared machine.
The peers need ``pip install rlcard open-spiel`` in a scratch environment; they are not a
dependency of the project.

usage: python bench/engine.py [--seconds S] [--one] [--peers /path/to/python]
"""

from __future__ import annotations

import argparse
import os
import pathlib
import random
import subprocess
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import engine
from engine.ai import choose_move

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


def positions(game: str, count: int) -> list[dict]:
    """Views of the seat to move a few moves into seeded random matches (with a real choice)."""
    out = []
    seed = 0
    while len(out) < count:
        rng = random.Random(seed)
        s = engine.new_game(game, players=4, seed=seed)
        for _ in range(6 + seed % 10):
            if engine.to_move(s) is None:
                break
            s = engine.play(s, rng.choice(engine.legal_moves(s)))
        seat = engine.to_move(s)
        if seat is not None and len(engine.legal_moves(s)) > 1:
            out.append(engine.view(s, seat))
        seed += 1
    return out


def hard_ai(game: str, seconds: float, iterations: int = 100) -> float:
    """Search iterations per second of the hard AI, over a fixed set of positions."""
    views = positions(game, 8)
    done = 0
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        for v in views:
            choose_move(v, level="hard", seed=done, iterations=iterations)
            done += iterations
    return done / (time.perf_counter() - t0)


def table(seconds: float) -> None:
    """The figures of the engine this process loaded."""
    kind = "compiled (mypyc)" if engine.COMPILED else "pure Python"
    print(f"\nengine: {kind}", flush=True)
    print(f"{'game / options':40s} {'fast moves/s':>14s} {'api moves/s':>13s} {'fast matches/s':>15s}")
    for game, options in CONFIGS:
        fast, fast_matches = fast_path(game, options, seconds)
        api, _ = public_api(game, options, seconds)
        label = f"{game} {' '.join(f'{k}={v}' for k, v in options.items())}".strip()
        print(f"{label:40s} {fast:14,.0f} {api:13,.0f} {fast_matches:15,.1f}", flush=True)
    for game in ("cinquillo", "535"):
        print(f"{'hard AI ' + game:40s} {hard_ai(game, seconds):14,.0f} iterations/s", flush=True)


def main() -> None:
    """Run every configuration and print a table (and the peers' figures when asked)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="seconds per measurement")
    ap.add_argument("--one", action="store_true", help="only the engine this process loads")
    ap.add_argument("--peers", metavar="PYTHON", help="interpreter with rlcard and open-spiel installed")
    args = ap.parse_args()
    table(args.seconds)
    if engine.COMPILED and not args.one:
        env = {**os.environ, "CINQ_PURE_ENGINE": "1"}
        subprocess.run([sys.executable, __file__, "--one", "--seconds", str(args.seconds)], env=env,
                       check=True)
    if args.peers:
        peers = pathlib.Path(__file__).resolve().parents[2] / "shared" / "bench" / "peer_engines.py"
        print(f"\nreference engines in the same run ({peers}):", flush=True)
        subprocess.run([args.peers, str(peers)], check=False)


if __name__ == "__main__":
    main()
