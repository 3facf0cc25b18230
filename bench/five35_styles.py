"""How each AI level leads and passes in 535: the figures behind engine.ai.five35_style.

Plays ``--deals`` four-player single rounds with every seat at ``--level`` (``medium``, ``hard``,
any level of bench/league/levels.py) and counts the leads that put down more than one card and the
passes on follows (all of them, and those where a play was legal), and the follow plays with no seat
about to go out that the medium player could never have made (``engine.ai.five35_style.odd_for_medium``).

usage: python bench/five35_styles.py [--level pimc] [--deals 20] [--budget-ms 100] [--seed 11]
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import engine
from bench.league import levels
from engine.ai import five35_style, medium_five35


def main() -> None:
    """Play the rounds and print the counts and the shares."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--level", default="pimc")
    ap.add_argument("--deals", type=int, default=20)
    ap.add_argument("--budget-ms", type=int, default=100)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()
    c: collections.Counter[str] = collections.Counter()
    for deal in range(args.deals):
        table_seed = args.seed * 1_000_003 + deal
        state = engine.new_game("535", players=4, seed=table_seed, target=1)
        ply = 0
        while (seat := engine.to_move(state)) is not None:
            view = engine.view(state, seat)
            move = levels.decide(args.level, view, table_seed * 1000 + ply, budget_ms=args.budget_ms,
                                 iterations=None, clock=time.process_time)
            if state.pile == 0:  # a lead (the state is the benchmark's own: it may read it)
                c["leads"] += 1
                c["multi-card leads"] += move.startswith("play") and len(move.split()) > 2
                c[f"leads of {len(move.split()) - 1}"] += 1
                early = "early" if state.counts[seat] >= 10 else "late"
                c[f"{early} leads"] += 1
                c[f"{early} multi-card leads"] += move.startswith("play") and len(move.split()) > 2
            else:
                c["follows"] += 1
                c["passes"] += move == "pass"
                c["adds"] += move.startswith("add")
                m = engine.rules_for(state).decode(state, move)
                danger = any(n <= medium_five35.DANGER for i, n in enumerate(state.counts) if i != seat)
                if move != "pass" and not danger and len(move.split()) - 1 != state.counts[seat]:
                    c["follow plays, no danger"] += 1  # what engine.ai.five35_style counts
                    c["odd for medium"] += five35_style.odd_for_medium(m, state.counts[seat], False)
                if len(view["legal_moves"]) > 1:
                    c["follows with a play legal"] += 1
                    c["passes with a play legal"] += move == "pass"
            state = engine.play(state, move)
            ply += 1
    print(f"535, 4 players, every seat {args.level}, {args.deals} rounds, budget {args.budget_ms} ms, "
          f"seed {args.seed}")
    for key, value in c.items():
        print(f"  {key:<28} {value}")
    print(f"  multi-card leads / leads      {c['multi-card leads'] / max(1, c['leads']):.3f}")
    print(f"  passes / follows              {c['passes'] / max(1, c['follows']):.3f}")
    print(f"  adds / follows not passed     {c['adds'] / max(1, c['follows'] - c['passes']):.3f}")
    could = c["passes with a play legal"] / max(1, c["follows with a play legal"])
    print(f"  passes / follows with a play  {could:.3f}")
    odd = c["odd for medium"] / max(1, c["follow plays, no danger"])
    print(f"  odd for medium / follow plays {odd:.3f}  (no seat about to go out)")


if __name__ == "__main__":
    main()
