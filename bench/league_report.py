"""The league table (issue 38) from the run logs: every row pooled over its seeds and runs.

usage: python bench/league_report.py [LOG ...] [--out bench/results/league.txt]
       (default logs: bench/results/league/*.jsonl, written by ``bench/tournament.py --log``;
       ``--out`` replaces the table between its markers and keeps the notes around it)

A row is one game, variant, player count, tested level, opponent level, per-decision budget and
make-up of both (:func:`bench.league.levels.fingerprint`), pooled over every seed and run of the
logs.  Printed per row: the deals, the win rate (the tested level's mean score per duplicate deal)
with its 95 % interval over the deals (normal approximation), the fair share, the issue's goal
where it sets one, the tested level's CPU time per decision (p50 / p99 / max) and what the row
still lacks: ``FEW DEALS`` (below 1,000 against medium, 300 against the others), ``LOW BUDGET``
(not the 100 ms CPU the goals are set at), ``BELOW GOAL`` (the estimate is below the goal; ``clearly``
when the whole interval is); for the hard player and its variants, the make-up's fingerprint
(``hard`` is whatever main's hard player was when the deals were played).  Then every hard
variant (``hard/...``) against the hard player of the same row, paired on the deals both played
(the deal's luck cancels out of the difference); against each make-up the hard player has had,
a variant of the same make-up as one (one later kept) counting as that hard player.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import sys
from collections import defaultdict
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from bench.league import runlog

LOGS = pathlib.Path(__file__).resolve().parent / "results" / "league"
#: the budget the issue's goals are set at (ms of CPU a decision)
GOAL_MS = 100
SEARCHERS = ("pimc_race", "pimc_ucb")


def goal(rec: dict[str, Any]) -> float | None:
    """The issue's goal for the hard player's row of ``rec`` (None for a variant of hard, which is
    an experiment): 535 (one round, 4 seats) 85 % against medium and 30 % against each PIMC design,
    Cinquillo (clasico, 4 seats) 28.5 % and 27 %; elsewhere, and against any other family, at least
    the fair share (a team of hard + medium: more than its team's share)."""
    if rec["level"] != "hard":
        return None
    default = rec["players"] == 4 and rec["variant"] in ("round", "clasico")
    if default and rec["game"] == "535":
        return {"medium": 0.85, **dict.fromkeys(SEARCHERS, 0.30)}.get(rec["opponent"], 0.25)
    if default:
        return {"medium": 0.285, **dict.fromkeys(SEARCHERS, 0.27)}.get(rec["opponent"], 0.25)
    return fair(rec)


def fair(rec: dict[str, Any]) -> float:
    """The fair share of ``rec``'s row: 1/players, or with teams (pairs, C-12) one team's share,
    2/players (a half at 4 seats, a third at 6)."""
    return (2 if rec["variant"] == "parejas" else 1) / rec["players"]


def interval(scores: list[float]) -> tuple[float, float]:
    """Mean and 95 % half-width (normal approximation; 0.5 per deal's sd when there is one deal)."""
    n = len(scores)
    mean = sum(scores) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in scores) / (n - 1)) if n > 1 else 0.5
    return mean, 1.96 * sd / math.sqrt(n)


def percentile(values: list[float], q: float) -> float:
    """The q-quantile by the nearest-rank method (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def group_key(rec: dict[str, Any]) -> tuple[Any, ...]:
    """A row: the log key without the seed (rows pool their seeds)."""
    row, _seed, budget, clock, iters, lfp, ofp = runlog.key(rec)
    return row, budget, clock, iters, lfp, ofp


def report(records: list[dict[str, Any]]) -> str:
    """The league table and the paired differences, as text."""
    rows: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for rec in records:
        rows[group_key(rec)].append(rec)
    def place(k: tuple[Any, ...]) -> tuple[Any, ...]:
        r = rows[k][0]
        return (r["game"] != "535", r["variant"] not in ("round", "clasico"), r["variant"], r["players"],
                r["level"] != "hard", r["level"], r["opponent"], k[1] or 0)

    order = sorted(rows, key=place)
    head = (f"{'game [variant, seats]':<24} {'level':<34} {'opponents':<12} {'budget':>7} {'deals':>5} "
            f"{'win rate':>8} {'95% CI':>15} {'fair':>5} {'goal':>5} {'cpu p50':>7} {'p99':>6} {'max':>6}"
            "  notes")
    lines = [head]
    for k in order:
        recs = rows[k]
        r0 = recs[0]
        mean, half = interval([r["score"] for r in recs])
        cpu = [t for r in recs for t in r["cpu_ms"]]
        g = goal(r0)
        need = 1000 if r0["opponent"] == "medium" else 300
        notes = []
        if len(recs) < need:
            notes.append(f"FEW DEALS ({len(recs)}/{need})")
        if r0["budget_ms"] != GOAL_MS or r0["clock"] != "cpu":
            notes.append(f"LOW BUDGET ({r0['budget_ms']} ms {r0['clock']})")
        if g is not None and mean < g:
            notes.append("BELOW GOAL, clearly" if mean + half < g else "BELOW GOAL")
        seeds = sorted({r["seed"] for r in recs})
        dates = sorted({r["date"] for r in recs})
        notes.append(f"seeds {','.join(map(str, seeds))}; {dates[0]}..{dates[-1]}")
        if r0["level"].startswith("hard"):  # which hard player: "hard" names whatever main ran then
            notes.append(f"make-up {k[4]}")
        where = f"{r0['game']} [{r0['variant']}, {r0['players']}p]"
        mixed = "+" in r0["opponent"]  # a mixed table: its levels in turn after the tested seat
        against = r0["opponent"] if mixed else f"{r0['players'] - 1}x {r0['opponent']}"
        budget = f"{r0['budget_ms']}ms"
        ci = f"[{100 * max(0.0, mean - half):.1f}, {100 * min(1.0, mean + half):.1f}]"
        goal_text = f"{100 * g:.1f}" if g is not None else "-"
        lines.append(f"{where:<24} {r0['level']:<34} {against:<12} "
                     f"{budget:>7} {len(recs):>5} {100 * mean:>7.1f}% "
                     f"{ci:>15} {100 * fair(r0):>5.1f} "
                     f"{goal_text:>5} {percentile(cpu, 0.5):>7.1f} "
                     f"{percentile(cpu, 0.99):>6.1f} {max(cpu) if cpu else 0:>6.1f}  {'; '.join(notes)}")
    lines += ["", "Paired differences (a hard variant minus the hard player, same row, same deals):"]
    # the hard player of a make-up: a row named "hard", or a variant whose settings came to the
    # same make-up as one (a variant later kept as main's hard player), its deals pooled
    hard_makeups = {k[4] for k in order if rows[k][0]["level"] == "hard"}
    for k in order:
        r0 = rows[k][0]
        if not r0["level"].startswith("hard/"):
            continue
        refs: dict[str, dict[tuple[int, int], float]] = {}
        for b in order:
            b0 = rows[b][0]
            if ((b0["level"] == "hard" or b[4] in hard_makeups) and b[4] != k[4]
                    and b0["game"] == r0["game"] and b0["variant"] == r0["variant"]
                    and b0["players"] == r0["players"] and b0["opponent"] == r0["opponent"]
                    and b[1:4] == k[1:4] and b[5] == k[5]):
                refs.setdefault(b[4], {}).update({(r["seed"], r["deal"]): r["score"] for r in rows[b]})
        mine = {(r["seed"], r["deal"]): r["score"] for r in rows[k]}
        for makeup, base in sorted(refs.items()):
            common = sorted(set(mine) & set(base))
            if len(common) < 2:
                continue
            mean, half = interval([mine[d] - base[d] for d in common])
            lines.append(f"  {r0['game']} [{r0['variant']}, {r0['players']}p] vs {r0['players'] - 1}x "
                         f"{r0['opponent']} at {r0['budget_ms']} ms: {r0['level']} - hard "
                         f"(make-up {makeup}) "
                         f"{100 * mean:+.1f} points [{100 * (mean - half):+.1f}, "
                         f"{100 * (mean + half):+.1f}] over {len(common)} deals")
    return "\n".join(lines)


def main() -> None:
    """Read the logs, print the report (and write it to ``--out`` if given)."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("logs", nargs="*")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    paths = args.logs or sorted(LOGS.glob("*.jsonl"))
    text = report(runlog.load(paths))
    print(text)
    if args.out:
        write(pathlib.Path(args.out), text)


BEGIN = "=== league table (bench/league_report.py; do not edit by hand) ==="
END = "=== end of the league table ==="


def write(path: pathlib.Path, text: str) -> None:
    """Put ``text`` between the table's markers in ``path`` (the notes around them are kept), or
    at its end when it has none."""
    block = f"{BEGIN}\n{text}\n{END}\n"
    old = path.read_text() if path.exists() else ""
    if BEGIN in old and END in old:
        head, rest = old.split(BEGIN, 1)
        new = head + block + rest.split(END, 1)[1].lstrip("\n")
    else:
        new = old + ("\n" if old else "") + block
    path.write_text(new)


if __name__ == "__main__":
    main()
