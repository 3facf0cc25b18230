"""AI tournament: win rates of each AI level against the others, with confidence intervals and timing.

Plays seeded single-round matches: Cinquillo ``preset="clasico"`` (one round) and 535 with
``target=1`` (the first player out wins the round and so the match).  In a matchup ``A:B`` one
seat plays level A and the others level B; A sits at seat ``match % players`` so that seat
advantages cancel out.  Match ``i`` uses the table seed ``seed * 1_000_003 + i`` and every AI
decision is seeded from it, so a matchup's results do not depend on the number of workers or on
the batch size.  Wins: a shared win counts 1/k.  A fair share is 1/players.

Prints, per game and player count, a table: level, opponents, matches, wins, win rate, its 95 %
Wilson interval, and level A's time per decision in ms (decisions with more than one legal move
only: forced moves are answered without thinking): wall-clock p50 / p99 / max, on a machine shared
with other work (so they include waiting for a core), and CPU-time p50 / p99 (``process_time``: what
the decision costs one core) p50 / p99 / max.

usage: python bench/tournament.py [--games cinquillo,535] [--players 4] [--matches 2000]
           [--matchups medium:easy,hard:medium,easy:medium] [--iterations N] [--budget-ms MS]
           [--workers 2] [--batch 25] [--seed 1] [--out bench/results/tournament.txt]
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import pathlib
import sys
import time
from dataclasses import dataclass, field
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from tqdm import tqdm

import engine
from engine.ai import choose_move

GAME_OPTIONS: dict[str, dict[str, Any]] = {
    "cinquillo": {"preset": "clasico"},
    "535": {"target": 1},
}


@dataclass(frozen=True)
class Job:
    """One batch of matches of one matchup."""

    game: str
    players: int
    level: str
    opponent: str
    first: int
    count: int
    seed: int
    iterations: int | None
    budget_ms: int | None


@dataclass
class Outcome:
    """What a batch produced: the tested level's win shares and decision times (seconds)."""

    wins: list[float] = field(default_factory=list)
    times: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def play_match(job: Job, index: int) -> tuple[float, list[float], list[float]]:
    """Play match ``index`` of the job's matchup: the tested seat's win share, and its decision
    times, wall-clock and CPU (the CPU time is what one core would take on an idle machine)."""
    table_seed = job.seed * 1_000_003 + index
    state = engine.new_game(job.game, players=job.players, seed=table_seed, **GAME_OPTIONS[job.game])
    tested = index % job.players
    times: list[float] = []
    cpu: list[float] = []
    ply = 0
    while (seat := engine.to_move(state)) is not None:
        view = engine.view(state, seat)
        level = job.level if seat == tested else job.opponent
        decision_seed = table_seed * 1000 + ply
        if seat == tested and len(view["legal_moves"]) > 1:
            t0, c0 = time.perf_counter(), time.process_time()
            move = choose_move(view, level=level, seed=decision_seed, iterations=job.iterations,
                               budget_ms=job.budget_ms, clock=time.perf_counter)
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
        else:
            move = choose_move(view, level=level, seed=decision_seed)
        state = engine.play(state, move)
        ply += 1
    winners = engine.result(state)["winners"]
    return (1.0 / len(winners) if tested in winners else 0.0), times, cpu


def run_batch(job: Job) -> tuple[Job, Outcome]:
    """Play the job's batch of matches (runs in a worker process)."""
    out = Outcome()
    for i in range(job.first, job.first + job.count):
        win, times, cpu = play_match(job, i)
        out.wins.append(win)
        out.times.extend(times)
        out.cpu.extend(cpu)
    return job, out


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion (fractional wins from shared wins are fine)."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by the nearest-rank method; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    k = max(0, math.ceil(q * len(ordered)) - 1)
    return ordered[k]


def table(game: str, players: int, rows: list[tuple[str, str, Outcome]], settings: str) -> str:
    """The printed table of one game and player count."""
    lines = [f"## {game}, {players} players ({settings}); fair share {100 / players:.1f}%",
             f"{'level':<7} {'opponents':<11} {'matches':>7} {'wins':>8} {'win rate':>8} "
             f"{'95% CI (Wilson)':>17} {'decisions':>9} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} "
             f"{'cpu p50':>7} {'cpu p99':>7} {'cpu max':>7}"]
    for level, opponent, out in rows:
        n = len(out.wins)
        w = sum(out.wins)
        lo, hi = wilson(w, n)
        ms = [t * 1000 for t in out.times]
        cpu = [t * 1000 for t in out.cpu]
        lines.append(f"{level:<7} {f'{players - 1}x {opponent}':<11} {n:>7} {w:>8.2f} {100 * w / n:>7.1f}% "
                     f"{f'[{100 * lo:.1f}%, {100 * hi:.1f}%]':>17} {len(ms):>9} "
                     f"{percentile(ms, 0.5):>7.1f} {percentile(ms, 0.99):>7.1f} "
                     f"{max(ms) if ms else 0:>7.1f} "
                     f"{percentile(cpu, 0.5):>7.1f} {percentile(cpu, 0.99):>7.1f} "
                     f"{max(cpu) if cpu else 0:>7.1f}")
    return "\n".join(lines)


def main() -> None:
    """Parse the arguments, play every matchup in batches over the workers, print the tables."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default="cinquillo,535")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--matches", type=int, default=2000)
    ap.add_argument("--matchups", default="medium:easy,hard:medium,easy:medium",
                    help="comma-separated LEVEL:OPPONENT pairs")
    ap.add_argument("--iterations", type=int, default=None, help="hard: iterations per decision")
    ap.add_argument("--budget-ms", type=int, default=None, help="hard: time budget per decision")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=25, help="matches per worker task")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None, help="also append the tables to this file")
    args = ap.parse_args()

    games = args.games.split(",")
    matchups = [tuple(m.split(":")) for m in args.matchups.split(",")]
    jobs = [Job(g, args.players, lvl, opp, first, min(args.batch, args.matches - first), args.seed,
                args.iterations, args.budget_ms)
            for g in games for lvl, opp in matchups for first in range(0, args.matches, args.batch)]
    results: dict[tuple[str, str, str], Outcome] = {}
    started = time.perf_counter()
    with multiprocessing.Pool(args.workers) as pool, \
            tqdm(total=len(games) * len(matchups) * args.matches, unit="match") as bar:
        for job, out in pool.imap_unordered(run_batch, jobs):
            acc = results.setdefault((job.game, job.level, job.opponent), Outcome())
            acc.wins.extend(out.wins)
            acc.times.extend(out.times)
            acc.cpu.extend(out.cpu)
            bar.update(job.count)
    elapsed = time.perf_counter() - started
    from engine.ai import DEFAULT_ITERATIONS

    hard = (f"hard: {args.iterations} iterations" if args.iterations
            else f"hard: default iterations {DEFAULT_ITERATIONS}")
    if args.budget_ms:
        hard += f", budget {args.budget_ms} ms"
    settings = (f"{hard}; seed {args.seed}; {args.workers} workers; {elapsed / 60:.1f} min wall")
    text = "\n\n".join(
        table(g, args.players, [(lvl, opp, results[(g, lvl, opp)]) for lvl, opp in matchups], settings)
        for g in games)
    print(text)
    if args.out:
        path = pathlib.Path(args.out)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as f:
            f.write(text + "\n\n")


if __name__ == "__main__":
    main()
