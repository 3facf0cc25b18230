"""Fit the 535 playout policy to how strong players move: the hard player's model of a searching seat.

The weights of :mod:`engine.ai.five35_playout` were tuned to *win* against three medium players
(``bench/five35_policy.py``); a search's playouts need instead a policy that *predicts* the moves of
the players it meets.  Here four-seat one-round games are played by a mix of strong players (the
league's ``pimc_race``, ``pimc_ucb``, ``ismcts`` and the hard player, plus one medium seat in a
third of the games), their moves are recorded, and a coordinate search finds the weights whose
choice agrees most often with the strong players' own moves (a tie of k best moves counts 1/k;
medium's moves are not fitted, only reported).  Every family is fitted at once, so the model is of
strong play in general, not of one opponent.

usage: python bench/five35_fit.py collect --games 60 --budget-ms 25 --out FILE.jsonl
           [--lineups A,B,C,D;E,F,G,H] [--first-seed 777000]
       python bench/five35_fit.py fit FILE.jsonl [--start hard] [--halves] [--level hard]
       python bench/five35_fit.py duel [--deals 500] [--seed 5]

``collect`` appends one JSON line per game (seed, line-up, moves) and resumes after the games the
file holds.  ``fit`` prints each kept step, the fitted weights and the agreement per family of the
fitted set, the engine's HARD and MEDIUM sets (``--halves``: fit on the even games, report on the
odd ones as well, a check that the fit is not the noise of these games; ``--level``: fit one
family's moves only, e.g. the hard player's own, expert iteration's step, issue 38's ninth pass).
``duel`` plays the plain policies (no search) against each other: one seat of A against three of B
on duplicate deals (each deal once per seat), A's share of the wins (fair 25%); ``structure`` is
pimc_race's rollout policy.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import engine
from bench.league import five35_policies, levels
from engine.ai import five35_playout
from engine.five35.cards import EIGHT, FIELD_BITS, FIELD_MASK
from engine.five35.game import Five35Rules
from engine.five35.piles import ADD, MOVES, NCARDS, NMOVES, PASS

RULES = Five35Rules()
LINEUPS = (("pimc_race", "pimc_ucb", "hard", "pimc_race"), ("hard", "pimc_race", "pimc_ucb", "ismcts"),
           ("pimc_ucb", "hard", "pimc_race", "medium"))
FIELDS = ("card", "low", "add", "brk", "e8near", "e8keep", "near", "danger", "lead", "pass_t", "win", "ranks")
STEPS = {"card": 0.25, "low": 0.05, "add": 0.5, "brk": 0.5, "e8near": 0.5, "e8keep": 0.5, "near": 1,
         "danger": 1, "lead": 0.25, "pass_t": 0.25, "win": 0.25, "ranks": 0.25}
INTS = ("near", "danger")
Record = tuple[str, Any, list[int], int]


def collect(path: str, games: int, budget_ms: int, lineups: tuple[tuple[str, ...], ...] = LINEUPS,
            first_seed: int = 777000) -> None:
    """Play ``games`` rounds (seeds ``first_seed``..), each seat's level from ``lineups`` rotated,
    and append each game's moves to ``path`` (the games it holds already are skipped)."""
    done = len(pathlib.Path(path).read_text().splitlines()) if pathlib.Path(path).exists() else 0
    with open(path, "a") as out:
        for g in range(done, games):
            base = lineups[g % len(lineups)]
            lineup = base[g % 4:] + base[:g % 4]
            state = engine.new_game("535", players=4, seed=first_seed + g, target=1)
            moves, ply = [], 0
            while (seat := engine.to_move(state)) is not None:
                view = engine.view(state, seat)
                move = levels.decide(lineup[seat], view, g * 1000 + ply, budget_ms=budget_ms,
                                     iterations=None, clock=time.process_time)
                moves.append(move)
                state = engine.play(state, move)
                ply += 1
            out.write(json.dumps({"seed": first_seed + g, "lineup": lineup, "moves": moves}) + "\n")
            out.flush()


def load(lines: list[str]) -> list[Record]:
    """Every decision with two or more legal moves: (level, state before it, legal moves, move)."""
    recs: list[Record] = []
    for line in lines:
        g = json.loads(line)
        st = engine.new_game("535", players=4, seed=g["seed"], target=1)
        for text in g["moves"]:
            legal = RULES.legal(st)
            if len(legal) > 1:
                recs.append((g["lineup"][st.to_move], st.clone(), legal, RULES.decode(st, text)))
            st = engine.play(st, text)
    return recs


def best_moves(st: Any, legal: list[int], w: dict[str, float]) -> set[int]:
    """The moves the policy of weights ``w`` (five35_playout's form, written out) ranks best."""
    seat = st.to_move
    hand, size = st.hands[seat], st.counts[seat]
    danger = any(c <= w["danger"] for i, c in enumerate(st.counts) if i != seat)
    scores: dict[int, float] = {}
    for m in legal:
        if m == PASS:
            continue
        n = NCARDS[m]
        if n == size:
            return {m}
        kind, ranks = MOVES[m]
        s = w["card"] * n - w["low"] * sum(ranks) / n + w["ranks"] * len(set(ranks))
        s += w["add"] if kind == ADD else 0.0
        if st.pile == 0:
            s += w["lead"] * n
        elif st.tables.effect[st.pile * NMOVES + m] < 0:
            s += w["win"]
        s -= w["brk"] * sum(1 for r in set(ranks) if (hand >> (FIELD_BITS * r)) & FIELD_MASK > ranks.count(r))
        if EIGHT in ranks:
            s += w["e8near"] if danger or size - n <= w["near"] else -w["e8keep"]
        scores[m] = s
    top = max(scores.values(), default=0.0)
    if not scores or (st.pile and top < w["pass_t"] and not danger):
        return {PASS}
    return {m for m, s in scores.items() if s == top}


def agreement(recs: list[Record], w: dict[str, float], level: str | None = None) -> tuple[float, int]:
    """The share of the decisions (of ``level``, or all) where the policy's choice is the move made."""
    hit, n = 0.0, 0
    for lv, st, legal, move in recs:
        if level is None or lv == level:
            best = best_moves(st, legal, w)
            n += 1
            hit += 1 / len(best) if move in best else 0.0
    return hit / max(n, 1), n


def fit(recs: list[Record], start: dict[str, float], rounds: int = 3) -> dict[str, float]:
    """Coordinate search from ``start`` for the weights of the highest agreement on ``recs``."""
    w, best = dict(start), agreement(recs, start)[0]
    for rnd in range(rounds):
        for key in STEPS:
            for sign in (1, -1):
                while True:
                    trial = dict(w)
                    trial[key] += STEPS[key] * (1 if key in INTS else 1 / (1 + rnd)) * sign
                    score = agreement(recs, trial)[0]
                    if score <= best + 1e-9:
                        break
                    best, w = score, trial
                    print(f"round {rnd} {key}={trial[key]:.3f} -> {best:.4f}", flush=True)
    return w


def as_dict(w: five35_playout.Weights) -> dict[str, float]:
    """A weight set's fields."""
    return {f: getattr(w, f) for f in FIELDS}


def report(recs: list[Record], sets: dict[str, dict[str, float]]) -> None:
    """The agreement of each weight set with each family's moves."""
    for level in ("pimc_race", "pimc_ucb", "ismcts", "hard", "medium"):
        cells = [f"{name} {100 * agreement(recs, w, level)[0]:5.1f}%" for name, w in sets.items()]
        print(f"  {level:<10} ({agreement(recs, sets['hard'], level)[1]:>4} decisions): " + ", ".join(cells))


def duel(a: str, b: str, deals: int, seed: int) -> float:
    """One seat of policy ``a`` against three of ``b`` (weight-set names or ``structure``): a's mean
    win share over ``deals`` duplicate deals."""
    def policy(name: str) -> Any:
        if name == "structure":
            return lambda st, x: five35_policies.structure_move(st, x)[0]
        w = levels.WEIGHTS[name]
        return lambda st, x: five35_playout.choose(st, five35_playout.rows_for(st.tables, w), x, w)
    pa, pb = policy(a), policy(b)
    won = 0
    for d in range(deals):
        for seat in range(4):
            st = engine.new_game("535", players=4, seed=seed * 1_000_003 + d, target=1)
            x = (d * 7919 + seat) & 0x3FFFFFFF
            while not st.over:
                x = (x * 1103515245 + 12345) & 0x3FFFFFFF
                RULES.apply(st, pa(st, x) if st.to_move == seat else pb(st, x))
            won += st.rounds[-1]["went_out"] == seat
    return won / (4 * deals)


def main() -> None:
    """``collect`` games, ``fit`` the weights or ``duel`` the policies (see the module docstring)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=("collect", "fit", "duel"))
    ap.add_argument("file", nargs="?")
    ap.add_argument("--out")
    ap.add_argument("--games", type=int, default=60)
    ap.add_argument("--budget-ms", type=int, default=25)
    ap.add_argument("--start", default="hard", choices=sorted(levels.WEIGHTS))
    ap.add_argument("--halves", action="store_true")
    ap.add_argument("--lineups", help="collect: line-ups a,b,c,d;e,f,g,h (default: LINEUPS)")
    ap.add_argument("--first-seed", type=int, default=777000)
    ap.add_argument("--level", help="fit: only this level's moves (default: every strong family)")
    ap.add_argument("--deals", type=int, default=500)
    ap.add_argument("--seed", type=int, default=5)
    args = ap.parse_args()
    if args.command == "duel":
        for a, b in (("hard", "medium"), ("fitted", "medium"), ("fitted", "hard"), ("hard", "fitted"),
                     ("hard", "structure"), ("fitted", "structure"), ("structure", "hard"),
                     ("structure", "fitted")):
            share = duel(a, b, args.deals, args.seed)
            print(f"  {a} vs 3x {b}: {100 * share:.1f}% of {args.deals} deals x 4 seats")
        return
    if args.command == "collect":
        lineups = (tuple(tuple(x.split(",")) for x in args.lineups.split(";")) if args.lineups
                   else LINEUPS)
        collect(args.out, args.games, args.budget_ms, lineups, args.first_seed)
        return
    lines = pathlib.Path(args.file).read_text().splitlines()
    recs = load(lines)
    def fitted_on(records: list[Record]) -> list[Record]:  # --level's moves, else every strong family's
        return [r for r in records if (r[0] == args.level if args.level else r[0] != "medium")]

    fitted = fit(fitted_on(recs), as_dict(levels.WEIGHTS[args.start]))
    print("fitted:", json.dumps(fitted))
    sets = {"fitted": fitted, "hard": as_dict(five35_playout.HARD), "medium": as_dict(five35_playout.MEDIUM)}
    print(f"agreement with the moves made, {len(lines)} games:")
    report(recs, sets)
    if args.halves:
        even, odd = load(lines[0::2]), load(lines[1::2])
        half = fit(fitted_on(even), as_dict(levels.WEIGHTS[args.start]))
        print("fitted on the even games:", json.dumps(half), "; on the odd games:")
        report(odd, {"fitted-even": half, "hard": sets["hard"], "medium": sets["medium"]})


if __name__ == "__main__":
    main()
