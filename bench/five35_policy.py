"""Tune the 535 playout policy's weights: one seat plays a weighted policy against three medium
players (or three copies of another weight set) on duplicate deals, and a coordinate search keeps
the changes that win more.

The policy has the medium player's form (:func:`engine.ai.medium_five35.score_move`: cards shed,
low ranks, add, broken groups, 8s kept for the end, pass on a costly follow) with every weight
free, plus two terms medium has not: ``lead`` (per card, only when leading a trick) and ``pass_t``
(the score a follow must reach, where medium passes below 0).  Only the seat's own hand, the pile
and the public hand sizes are read (G-1), as in medium.

usage: python bench/five35_policy.py [--deals 2000] [--seed 1] [--rounds 3] [--start medium]
           [--versus medium] [--check 4000]
"""

from __future__ import annotations

import argparse
import json
import math
import pathlib
import sys
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import engine
from engine.ai import five35_playout
from engine.five35.cards import GUARD
from engine.five35.game import Five35Rules
from engine.five35.piles import ADD, MOVES, PASS

RULES = Five35Rules()
MEDIUM = {"card": 1.0, "low": 0.15, "add": 0.5, "brk": 2.5, "e8near": 3.0, "e8keep": 3.0,
          "near": 3, "danger": 2, "lead": 0.0, "pass_t": 0.0}
STEPS = {"card": 0.25, "low": 0.05, "add": 0.5, "brk": 0.75, "e8near": 1.0, "e8keep": 1.0,
         "near": 1, "danger": 1, "lead": 0.25, "pass_t": 0.5}
INTS = ("near", "danger")


def choose(st, w: dict, rows) -> int:
    """The weighted policy's move for the seat to move."""
    seat = st.to_move
    hand = st.hands[seat] | GUARD
    size = st.counts[seat]
    danger = any(c <= w["danger"] for i, c in enumerate(st.counts) if i != seat)
    lead = st.pile == 0
    best, best_score = PASS, float("-inf")
    for m, req, _base, used, eight, n in rows[st.pile]:
        d = hand - req
        if d & GUARD != GUARD:
            continue
        if n == size:
            return m
        kind, ranks = MOVES[m]
        score = w["card"] * n - w["low"] * sum(ranks) / n
        if kind == ADD:
            score += w["add"]
        if lead:
            score += w["lead"] * n
        broken = d & used
        if broken:
            score -= w["brk"] * ((broken + used) & GUARD).bit_count()
        if eight:
            score += w["e8near"] if danger or size - n <= w["near"] else -w["e8keep"]
        if score > best_score:
            best, best_score = m, score
    if st.pile and best_score < w["pass_t"] and not danger:
        return PASS
    return best


def win_rate(w: dict, versus: dict | None, deals: range, players: int = 4) -> float:
    """Mean win share of ``w`` over ``deals``, played once per seat against ``versus`` (None:
    medium, the compiled playout policy)."""
    total = 0.0
    for d in deals:
        for seat in range(players):
            st = engine.new_game("535", players=players, seed=d, target=1)
            rows = five35_playout.rows_for(st.tables)
            x = d * 7919 + seat
            while not st.over:
                if st.to_move == seat:
                    m = choose(st, w, rows)
                elif versus is None:
                    x = (x * 1103515245 + 12345) & 0x7FFFFFFF
                    m = five35_playout.choose(st, rows, x)
                else:
                    m = choose(st, versus, rows)
                RULES.apply(st, m)
            if st.rounds[-1]["went_out"] == seat:
                total += 1.0
    return total / (len(deals) * players)


def main() -> None:
    """Tune from ``--start`` against ``--versus``, print each kept change, check on fresh deals."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deals", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--start", default="medium", help="medium, or a JSON weight set")
    ap.add_argument("--versus", default="medium", help="medium, or a JSON weight set")
    ap.add_argument("--check", type=int, default=4000, help="fresh deals to check the result on")
    args = ap.parse_args()
    w = dict(MEDIUM) if args.start == "medium" else {**MEDIUM, **json.loads(args.start)}
    versus = None if args.versus == "medium" else {**MEDIUM, **json.loads(args.versus)}
    deals = range(args.seed * 1_000_003, args.seed * 1_000_003 + args.deals)
    t0 = time.time()
    best = win_rate(w, versus, deals)
    print(f"start {best:.4f}  {json.dumps(w)}", flush=True)
    for rnd in range(args.rounds):
        scale = 1.0 / (1 + rnd)
        for key in STEPS:
            for sign in (1, -1):
                while True:
                    step = STEPS[key] * (1 if key in INTS else scale) * sign
                    trial = dict(w)
                    trial[key] = w[key] + step
                    r = win_rate(trial, versus, deals)
                    if r > best + 0.5 / math.sqrt(args.deals * 4):  # beyond the noise of ties
                        best, w = r, trial
                        print(f"round {rnd} {key}={trial[key]:.3f} -> {best:.4f} "
                              f"({time.time() - t0:.0f}s)", flush=True)
                    else:
                        break
    print(f"tuned {best:.4f}  {json.dumps(w)}")
    fresh = range(777_000_000, 777_000_000 + args.check)
    base = win_rate(MEDIUM, versus, fresh)
    tuned = win_rate(w, versus, fresh)
    print(f"check on {args.check} fresh deals: medium weights {base:.4f}, tuned {tuned:.4f}")


if __name__ == "__main__":
    main()
