"""Garbage-collector pauses and engine cache sizes while the hard 535 player thinks, gc enabled.

usage: python bench/gc_pauses.py [--decisions 400] [--budget-ms 100] [--memo-limit N]

Plays seeded 535 matches (4 players, all hard) and times every collection (``gc.callbacks``) and
every decision (wall clock, as the service sees it).  Prints the number of collections per
generation, the longest pause of each, the decisions' wall p50 / p99 / max, and the largest the
535 legal-move memo grew (entries over all piles).  ``--memo-limit`` overrides
``engine.five35.game.MEMO_LIMIT`` (50000 was the old value, when a full collection took ~0.2 s).
"""

from __future__ import annotations

import argparse
import gc
import pathlib
import sys
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import engine
import engine.five35.game as five35_game
from engine.ai import choose_move
from engine.five35.piles import tables_for


def main() -> None:
    """Play, measure, print."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decisions", type=int, default=400)
    ap.add_argument("--budget-ms", type=int, default=100)
    ap.add_argument("--memo-limit", type=int, default=None)
    a = ap.parse_args()
    if a.memo_limit is not None:
        five35_game.MEMO_LIMIT = a.memo_limit
    pauses: dict[int, list[float]] = {0: [], 1: [], 2: []}
    started: list[float] = [0.0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[0] = time.perf_counter()
        else:
            pauses[info["generation"]].append(time.perf_counter() - started[0])

    gc.enable()
    gc.callbacks.append(on_gc)
    memo = tables_for(4, True).memo
    walls: list[float] = []
    biggest = 0
    match = 0
    while len(walls) < a.decisions:
        state = engine.new_game("535", players=4, seed=1000 + match)
        match += 1
        ply = 0
        while engine.to_move(state) is not None and len(walls) < a.decisions:
            view = engine.view(state, engine.to_move(state))
            t0 = time.perf_counter()
            move = choose_move(view, level="hard", seed=ply, budget_ms=a.budget_ms, clock=time.process_time)
            if len(view["legal_moves"]) > 1:
                walls.append(time.perf_counter() - t0)
            biggest = max(biggest, sum(len(m) for m in memo))
            state = engine.play(state, move)
            ply += 1
    gc.callbacks.remove(on_gc)
    ms = sorted(w * 1000 for w in walls)
    print(f"# {len(ms)} hard 535 decisions, budget {a.budget_ms} ms CPU, gc on, "
          f"memo limit {five35_game.MEMO_LIMIT} per pile")
    for g, p in pauses.items():
        print(f"gen {g}: {len(p)} collections, longest {1000 * max(p, default=0):.1f} ms")
    print(f"decision wall ms: p50 {ms[len(ms) // 2]:.1f} p99 {ms[int(0.99 * len(ms))]:.1f} max {ms[-1]:.1f}; "
          f"legal-move memo: at most {biggest} entries")


if __name__ == "__main__":
    main()
