"""AI tournament on duplicate deals: win rates of one AI level against three of another, with
per-deal confidence intervals and the tested player's time per decision.

Plays seeded single-round matches: Cinquillo ``preset="clasico"`` (one round) and 535 with
``target=1`` (the first player out wins the round and so the match).  **Duplicate deals**: deal
``d`` (table seed ``seed * 1_000_003 + d``) is played once with the tested level in *every* seat
and the opponent level in the others, so each deal's luck counts once for every seat.  A deal's
score is the tested level's mean win share over its seats (a shared win counts 1/k); the win rate
is the mean over deals, and its 95 % interval is computed from the per-deal scores (normal
approximation), which removes the deal-to-deal variance that a per-match interval carries.  Every
AI decision is seeded from the deal and the ply, so results do not depend on workers or batches.
A fair share is 1/players.

Levels: ``easy``, ``medium``, ``hard`` (``engine.ai``), and ``pimc`` (benchmark only, 535): flat
determinized Monte Carlo over *every* legal move with the medium playouts, uniform deals, no
pruning, at the same budget as ``hard`` (a plain fair searcher to measure ``hard`` against);
``pimc/k=../prune=../z=../after=../pool=../beta=../w=..`` varies it (see :func:`pimc_settings`;
``w=hard``: the hard player's tuned playout weights instead of the medium player's).

Timing, for the tested level's decisions with more than one legal move: CPU time (``process_time``,
what the decision costs one core) p50 / p99 / max, and wall-clock p99 with the garbage collector on
(as the service runs; on a shared machine it includes waiting for a core).  ``--budget-ms`` gives the
searching levels a time budget on the CPU clock (``--clock wall`` for the wall clock).

usage: python bench/tournament.py [--games cinquillo,535] [--players 4] [--deals 1000]
           [--matchups hard:medium] [--iterations N] [--budget-ms MS] [--clock cpu|wall]
           [--workers 2] [--batch 5] [--seed 1] [--minutes M] [--out bench/results/tournament.txt]
           [--scores scores.json]

``hard`` plays as the service does: at most ``engine.ai.DEFAULT_ITERATIONS`` iterations (or
``--iterations``), capped by ``--budget-ms``.  ``--scores`` writes every row's per-deal scores, for
``bench/paired.py`` (two variants compared on the same deals).

``--minutes`` stops the run after M minutes and reports the deals finished by then (the rows
then have fewer deals than asked, which their ``deals`` column says).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import multiprocessing
import pathlib
import random
import sys
import time
from dataclasses import dataclass, field
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from tqdm import tqdm

import engine
import engine.ai
from engine.ai import choose_move, cinquillo_belief, five35_pimc, five35_playout, five35_style
from engine.ai.games import Five35Game, game_for

#: the 535 playout weight sets a level may name (``pimc/w=hard``, ``hard/w=medium``, ``hard/own=hard``);
#: ``selfplay``: tuned by ``bench/five35_policy.py`` against three copies of the hard set
#: (``five35_playout.VS_SEARCHERS``; ``hard/own=selfplay``: the hard player's own playouts when most
#: others play like searchers, an experiment)
WEIGHTS = {"medium": five35_playout.MEDIUM, "hard": five35_playout.HARD,
           "selfplay": five35_playout.VS_SEARCHERS}

GAME_OPTIONS: dict[str, dict[str, Any]] = {
    "cinquillo": {"preset": "clasico"},
    "535": {"target": 1},
}


@dataclass(frozen=True)
class Job:
    """One batch of deals of one matchup."""

    game: str
    players: int
    level: str
    opponent: str
    first: int
    count: int
    seed: int
    iterations: int | None
    budget_ms: int | None
    wall_clock: bool


@dataclass
class Outcome:
    """What a batch produced: per deal the tested level's score, and its decision times (s)."""

    scores: list[float] = field(default_factory=list)
    deals: list[int] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def pimc_settings(level: str) -> dict[str, Any]:
    """The settings of a ``pimc`` level: ``pimc`` alone is plain PIMC (every move, no pruning, no
    belief); ``pimc/k=4/prune=1/z=3/after=24/pool=64/beta=2`` sets any of them (experiments)."""
    out: dict[str, Any] = {"k": 0, "prune": 0, "z": five35_pimc.PRUNE_Z,
                           "after": five35_pimc.PRUNE_AFTER, "pool": 0, "beta": 2.0, "w": "medium"}
    for part in level.split("/")[1:]:
        key, value = part.split("=")
        if key not in out:
            raise ValueError(f"unknown pimc setting {key!r} in {level!r}")
        out[key] = value if key == "w" else float(value)
    return out


def decide(job: Job, view: dict[str, Any], level: str, seed: int) -> str:
    """The move of ``level`` (``pimc`` included) from ``view``, with the job's search budget."""
    clock = time.perf_counter if job.wall_clock else time.process_time
    if level.startswith("pimc"):
        if len(view["legal_moves"]) == 1:
            return str(view["legal_moves"][0])
        started = clock()
        opts = pimc_settings(level)
        rng = random.Random(seed)
        game = game_for(view, rng, heuristic_playouts=True, belief_pool=int(opts["pool"]),
                        belief_beta=opts["beta"], weights=WEIGHTS[opts["w"]])
        assert isinstance(game, Five35Game), "pimc plays 535 only"
        iters = job.iterations if job.iterations or job.budget_ms else 100
        budget = (engine.ai.BUDGET_SHARE * job.budget_ms / 1000 - (clock() - started)
                  if job.budget_ms else None)
        move = five35_pimc.choose(game, rng, iterations=iters, budget_s=budget, clock=clock,
                                  top_k=int(opts["k"]), prune=bool(opts["prune"]),
                                  prune_z=opts["z"], prune_after=int(opts["after"]))
        return str(game.rules.encode(game.base, move))
    if level.startswith("hard"):
        game = view["game"]
        iterations = job.iterations or engine.ai.DEFAULT_ITERATIONS[game]  # as the service plays
        if level == "hard":
            return choose_move(view, level="hard", seed=seed, iterations=iterations,
                               budget_ms=job.budget_ms, clock=clock)
        return _hard_variant(view, level, seed, iterations, job.budget_ms, clock)
    return choose_move(view, level=level, seed=seed)


def _hard_variant(view: dict[str, Any], level: str, seed: int, iterations: int,
                  budget_ms: int | None, clock: Any) -> str:
    """``hard/iters=1000/pool=300/beta=2/z=1.5/w=medium/style=0/prior=-0.1/follows=0/own=selfplay/ms=200/halve=1``
    (experiments): the hard player with some of its per-game settings (``engine.ai``'s tables, the
    Cinquillo belief's BETA, :mod:`engine.ai.five35_style`'s switches) changed for this move."""
    game = view["game"]
    saved = (engine.ai.BELIEF_POOL[game], engine.ai.OVERRULE_Z[game], cinquillo_belief.BETA,
             engine.ai.PLAYOUT_535, engine.ai.STYLES_535, five35_style.PRIOR, five35_style.FOLLOWS,
             five35_style.OWN_VS_SEARCHERS, engine.ai.HALVING_535)
    try:
        for part in level.split("/")[1:]:
            key, value = part.split("=")
            if key == "iters":
                iterations = int(value)
            elif key == "pool":
                engine.ai.BELIEF_POOL[game] = int(value)
            elif key == "beta":
                cinquillo_belief.BETA = float(value)
            elif key == "w":
                engine.ai.PLAYOUT_535 = WEIGHTS[value]
            elif key == "style":
                engine.ai.STYLES_535 = value == "1"
            elif key == "prior":
                five35_style.PRIOR = float(value)
            elif key == "own":  # own=selfplay: the own seat's set when most others search
                five35_style.OWN_VS_SEARCHERS = None if value == "none" else WEIGHTS[value]
            elif key == "follows":
                five35_style.FOLLOWS = value == "1"
            elif key == "ms":  # ms=200: this player's CPU budget, not the job's (what speed buys)
                budget_ms = int(value)
            elif key == "halve":  # halve=1: sequential halving of the 535 moves
                engine.ai.HALVING_535 = value == "1"
            elif key == "z":
                engine.ai.OVERRULE_Z[game] = None if value == "none" else float(value)
            else:
                raise ValueError(f"unknown hard setting {key!r} in {level!r}")
        return choose_move(view, level="hard", seed=seed, iterations=iterations,
                           budget_ms=budget_ms, clock=clock)
    finally:
        (engine.ai.BELIEF_POOL[game], engine.ai.OVERRULE_Z[game], cinquillo_belief.BETA,
         engine.ai.PLAYOUT_535, engine.ai.STYLES_535, five35_style.PRIOR, five35_style.FOLLOWS,
         five35_style.OWN_VS_SEARCHERS, engine.ai.HALVING_535) = saved


def play_seat(job: Job, deal: int, tested: int, out: Outcome) -> float:
    """Play deal ``deal`` with the tested level at seat ``tested``; its win share."""
    table_seed = job.seed * 1_000_003 + deal
    state = engine.new_game(job.game, players=job.players, seed=table_seed, **GAME_OPTIONS[job.game])
    ply = 0
    while (seat := engine.to_move(state)) is not None:
        view = engine.view(state, seat)
        level = job.level if seat == tested else job.opponent
        decision_seed = table_seed * 1000 + ply
        if seat == tested and len(view["legal_moves"]) > 1:
            t0, c0 = time.perf_counter(), time.process_time()
            move = decide(job, view, level, decision_seed)
            out.wall.append(time.perf_counter() - t0)
            out.cpu.append(time.process_time() - c0)
        else:
            move = decide(job, view, level, decision_seed)
        state = engine.play(state, move)
        ply += 1
    winners = engine.result(state)["winners"]
    return 1.0 / len(winners) if tested in winners else 0.0


def run_batch(job: Job) -> tuple[Job, Outcome]:
    """Play the job's deals, each once per seat (runs in a worker process, gc enabled)."""
    gc.enable()
    out = Outcome()
    for d in range(job.first, job.first + job.count):
        out.scores.append(sum(play_seat(job, d, s, out) for s in range(job.players)) / job.players)
        out.deals.append(d)
    return job, out


def interval(scores: list[float], z: float = 1.96) -> tuple[float, float, float]:
    """Mean of the per-deal scores and its normal-approximation interval."""
    n = len(scores)
    if n == 0:
        return 0.0, 0.0, 1.0
    mean = sum(scores) / n
    var = sum((x - mean) ** 2 for x in scores) / (n - 1) if n > 1 else 0.25
    half = z * math.sqrt(var / n)
    return mean, max(0.0, mean - half), min(1.0, mean + half)


def percentile(values: list[float], q: float) -> float:
    """The q-quantile (0..1) by the nearest-rank method; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def table(game: str, players: int, rows: list[tuple[str, str, Outcome]], settings: str) -> str:
    """The printed table of one game and player count."""
    lines = [f"## {game}, {players} players, duplicate deals ({settings}); fair share {100 / players:.1f}%",
             f"{'level':<7} {'opponents':<11} {'deals':>6} {'win rate':>8} {'95% CI (per deal)':>18} "
             f"{'decisions':>9} {'cpu p50':>7} {'cpu p99':>7} {'cpu max':>7} {'wall p99':>8}"]
    for level, opponent, out in rows:
        mean, lo, hi = interval(out.scores)
        cpu = [t * 1000 for t in out.cpu]
        wall = [t * 1000 for t in out.wall]
        lines.append(f"{level:<7} {f'{players - 1}x {opponent}':<11} {len(out.scores):>6} "
                     f"{100 * mean:>7.1f}% {f'[{100 * lo:.1f}%, {100 * hi:.1f}%]':>18} {len(cpu):>9} "
                     f"{percentile(cpu, 0.5):>7.1f} {percentile(cpu, 0.99):>7.1f} "
                     f"{max(cpu) if cpu else 0:>7.1f} {percentile(wall, 0.99):>8.1f}")
    return "\n".join(lines)


def main() -> None:
    """Parse the arguments, play every matchup in batches over the workers, print the tables."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default="cinquillo,535")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--deals", type=int, default=1000)
    ap.add_argument("--matchups", default="hard:medium", help="comma-separated LEVEL:OPPONENT pairs")
    ap.add_argument("--iterations", type=int, default=None, help="searchers: iterations per decision")
    ap.add_argument("--budget-ms", type=int, default=None, help="searchers: time budget per decision")
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu", help="the budget's clock")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--batch", type=int, default=5, help="deals per worker task")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=None, help="also append the tables to this file")
    ap.add_argument("--scores", default=None,
                    help="write every row's per-deal scores to this JSON file (paired comparisons)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop after this long and report the deals finished by then")
    args = ap.parse_args()

    games = args.games.split(",")
    matchups = [tuple(m.split(":")) for m in args.matchups.split(",")]
    # deal batches interleaved across the rows, so that a run cut short leaves every row its share
    jobs = [Job(g, args.players, lvl, opp, first, min(args.batch, args.deals - first), args.seed,
                args.iterations, args.budget_ms, args.clock == "wall")
            for first in range(0, args.deals, args.batch) for g in games for lvl, opp in matchups]
    results: dict[tuple[str, str, str], Outcome] = {}
    started = time.perf_counter()
    stop_at = started + args.minutes * 60 if args.minutes else None
    try:
        with multiprocessing.Pool(args.workers) as pool, \
                tqdm(total=len(jobs) and sum(j.count for j in jobs), unit="deal") as bar:
            for job, out in pool.imap_unordered(run_batch, jobs):
                acc = results.setdefault((job.game, job.level, job.opponent), Outcome())
                acc.scores.extend(out.scores)
                acc.deals.extend(out.deals)
                acc.wall.extend(out.wall)
                acc.cpu.extend(out.cpu)
                bar.update(job.count)
                if stop_at is not None and time.perf_counter() > stop_at:
                    print("time is up: partial results", file=sys.stderr)
                    break
    except KeyboardInterrupt:  # print what was played so far (a run cut short for time)
        print("interrupted: partial results", file=sys.stderr)
    elapsed = time.perf_counter() - started
    from engine.ai import DEFAULT_ITERATIONS

    budget = (f"{args.iterations} iterations" if args.iterations
              else f"hard: at most {DEFAULT_ITERATIONS} iterations (as the service)")
    if args.budget_ms:
        budget += f"{', ' if budget else ''}budget {args.budget_ms} ms {args.clock}"
    settings = f"searchers: {budget}; seed {args.seed}; {args.workers} workers; {elapsed / 60:.1f} min wall"
    text = "\n\n".join(
        table(g, args.players, [(lvl, opp, results[(g, lvl, opp)]) for lvl, opp in matchups
                                if (g, lvl, opp) in results], settings)
        for g in games)
    print(text)
    if args.scores:
        pathlib.Path(args.scores).write_text(json.dumps(
            {f"{g} {lvl}:{opp}": dict(zip(out.deals, out.scores, strict=True))
             for (g, lvl, opp), out in results.items()}))
    if args.out:
        path = pathlib.Path(args.out)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as f:
            f.write(text + "\n\n")


if __name__ == "__main__":
    main()
