"""AI tournament on duplicate deals: win rates of one player against the others of another, with
per-deal confidence intervals and the tested player's time per decision.

**Duplicate deals**: deal ``d`` (table seed ``seed * 1_000_003 + d``) is played once with the
tested level in *every* seat and the opponent level in the others, so each deal's luck counts once
for every seat.  A deal's score is the tested level's mean win share over its seats (a shared win
counts 1/k; with teams, a win of the tested seat's team counts 1); the win rate is the mean over
deals, and its 95 % interval is computed from the per-deal scores (normal approximation), which
removes the deal-to-deal variance that a per-match interval carries.  Every decision is seeded
from the deal and the ply, so results do not depend on workers or batches.  The fair share is
1/players, with teams one team's: 2/players (the partners are pairs, C-12).

Levels: ``bench/league/levels.py`` (``easy``, ``medium``, ``hard[/field=value...]``,
``pimc[/w=...]``, and the league's ``pimc_race``, ``pimc_ucb``, ``ismcts``; an opponent
``A+B+C`` is a mixed table, its levels in turn after the tested seat).  Variants and player
counts: ``bench/league/variants.py`` (``--variant``, ``--players``).

Timing, for the tested level's decisions with more than one legal move: CPU time (``process_time``,
what the decision costs one core) p50 / p99 / max, and wall-clock p99 with the garbage collector on
(as the service runs; on a shared machine it includes waiting for a core).  ``--budget-ms`` gives the
searching levels a time budget on the CPU clock (``--clock wall`` for the wall clock).

usage: python bench/tournament.py [--games cinquillo,535] [--players 4] [--variant NAME]
           [--deals 1000] [--matchups hard:medium] [--iterations N] [--budget-ms MS] [--clock cpu|wall]
           [--workers 2] [--batch 5] [--seed 1] [--minutes M] [--out FILE] [--scores FILE] [--log FILE]

``hard`` plays as the service does: at most its settings' iterations (or ``--iterations``), capped by
``--budget-ms``.  ``--scores`` writes every row's per-deal scores, for ``bench/paired.py`` (two
variants compared on the same deals); ``--log`` appends each finished batch as a JSON line as it
comes (``bench/paired.py`` reads those too), so a long run's rows can be read before it ends.
``--minutes`` stops the run after M minutes and reports the deals finished by then.

**Resumable league runs** (issue 38): with ``--log``, every finished deal is a JSON line of its
own (:mod:`bench.league.runlog`: row, seed, deal, score, budget, the tested decisions' CPU times,
and a fingerprint of each level's make-up), and the deals the log already holds for the same row,
seed, budget and make-up are not played again.  Rerunning the same command after a stop, or with a
larger ``--deals``, only plays what is missing, so a row grows across sessions;
``bench/league_report.py`` aggregates the logs into ``bench/results/league.txt``.  Keep a running
log outside the git work tree and copy it in to commit: a checkout or rebase that rewrites a
committed log leaves the run appending to the unlinked old file.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import multiprocessing
import pathlib
import sys
import time
from dataclasses import dataclass, field

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from tqdm import tqdm

import engine
from bench.league import levels, runlog, variants


@dataclass(frozen=True)
class Job:
    """One batch of deals of one matchup."""

    game: str
    players: int
    variant: str
    level: str
    opponent: str
    first: int
    count: int
    seed: int
    iterations: int | None
    budget_ms: int | None
    wall_clock: bool
    deal_list: tuple[int, ...] = ()  # the deals to play, when not first..first+count-1 (a resumed run)

    def row(self) -> str:
        """The row's name in score files: ``GAME LEVEL:OPPONENT``, the variant and seats added
        when they are not the default ones."""
        game = self.game
        if self.variant != variants.DEFAULT[game] or self.players != 4:
            game += f"[{self.variant},{self.players}p]"
        return f"{game} {self.level}:{self.opponent}"


@dataclass
class Outcome:
    """What a batch produced: per deal the tested level's score, and its decision times (s)."""

    scores: list[float] = field(default_factory=list)
    deals: list[int] = field(default_factory=list)
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    deal_cpu: list[list[float]] = field(default_factory=list)  # per deal, its share of ``cpu``


def seat_levels(job: Job, tested: int) -> list[str]:
    """Each seat's level when the tested level sits at ``tested`` (a mixed table's levels in turn
    after it, :func:`bench.league.levels.seat_level`)."""
    return [job.level if s == tested else levels.seat_level(job.opponent, (s - tested - 1) % job.players)
            for s in range(job.players)]


def play_seat(job: Job, deal: int, tested: int, out: Outcome) -> float:
    """Play deal ``deal`` with the tested level at seat ``tested``; its win share."""
    table_seed = job.seed * 1_000_003 + deal
    opts = variants.options(job.game, job.variant, job.players)
    state = engine.new_game(job.game, players=job.players, seed=table_seed, **opts)
    clock = time.perf_counter if job.wall_clock else time.process_time
    seats = seat_levels(job, tested)
    ply = 0
    while (seat := engine.to_move(state)) is not None:
        view = engine.view(state, seat)
        level = seats[seat]
        decision_seed = table_seed * 1000 + ply
        timed = seat == tested and len(view["legal_moves"]) > 1
        t0, c0 = time.perf_counter(), time.process_time()
        move = levels.decide(level, view, decision_seed, budget_ms=job.budget_ms,
                             iterations=job.iterations, clock=clock)
        if timed:
            out.wall.append(time.perf_counter() - t0)
            out.cpu.append(time.process_time() - c0)
        state = engine.play(state, move)
        ply += 1
    winners = engine.result(state)["winners"]
    if tested not in winners:
        return 0.0
    return 1.0 if opts.get("teams") else 1.0 / len(winners)


def run_batch(job: Job) -> tuple[Job, Outcome]:
    """Play the job's deals, each once per seat (runs in a worker process, gc enabled)."""
    gc.enable()
    out = Outcome()
    for d in job.deal_list or range(job.first, job.first + job.count):
        before = len(out.cpu)
        out.scores.append(sum(play_seat(job, d, s, out) for s in range(job.players)) / job.players)
        out.deals.append(d)
        out.deal_cpu.append(out.cpu[before:])
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


def table(title: str, fair: float, rows: list[tuple[str, str, Outcome]], players: int, settings: str) -> str:
    """The printed table of one game, variant and player count."""
    lines = [f"## {title}, duplicate deals ({settings}); fair share {100 * fair:.1f}%",
             f"{'level':<7} {'opponents':<11} {'deals':>6} {'win rate':>8} {'95% CI (per deal)':>18} "
             f"{'decisions':>9} {'cpu p50':>7} {'cpu p99':>7} {'cpu max':>7} {'wall p99':>8}"]
    for level, opponent, out in rows:
        mean, lo, hi = interval(out.scores)
        cpu = [t * 1000 for t in out.cpu]
        wall = [t * 1000 for t in out.wall]
        against = opponent if levels.MIXED in opponent else f"{players - 1}x {opponent}"
        lines.append(f"{level:<7} {against:<11} {len(out.scores):>6} "
                     f"{100 * mean:>7.1f}% {f'[{100 * lo:.1f}%, {100 * hi:.1f}%]':>18} {len(cpu):>9} "
                     f"{percentile(cpu, 0.5):>7.1f} {percentile(cpu, 0.99):>7.1f} "
                     f"{max(cpu) if cpu else 0:>7.1f} {percentile(wall, 0.99):>8.1f}")
    return "\n".join(lines)


def main() -> None:
    """Parse the arguments, play every matchup in batches over the workers, print the tables."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default="cinquillo,535")
    ap.add_argument("--players", type=int, default=4)
    ap.add_argument("--variant", default=None, help="bench/league/variants.py (default: each game's)")
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
    ap.add_argument("--log", default=None, help="append each finished batch to this file (JSON lines)")
    ap.add_argument("--minutes", type=float, default=None,
                    help="stop after this long and report the deals finished by then")
    args = ap.parse_args()

    games = args.games.split(",")
    matchups = [tuple(m.split(":")) for m in args.matchups.split(",")]
    for _lvl, opp in matchups:  # a mixed table names at most one level per opponent seat
        if len(opp.split(levels.MIXED)) > args.players - 1:
            ap.error(f"{opp}: more levels than the {args.players - 1} opponent seats")
    for g in games:  # refuse a bad variant or level before any deal is played
        variants.options(g, args.variant or variants.DEFAULT[g], args.players)
    # deal batches interleaved across the rows, so that a run cut short leaves every row its share
    jobs = [Job(g, args.players, args.variant or variants.DEFAULT[g], lvl, opp, first,
                min(args.batch, args.deals - first), args.seed, args.iterations, args.budget_ms,
                args.clock == "wall")
            for first in range(0, args.deals, args.batch) for g in games for lvl, opp in matchups]
    if args.log:  # a resumed run plays only the deals its log does not hold yet
        jobs = runlog.missing(jobs, runlog.done(args.log))
    results: dict[Job, Outcome] = {}  # keyed by the first batch's job of each row
    rows: dict[str, Job] = {}
    started = time.perf_counter()
    stop_at = started + args.minutes * 60 if args.minutes else None
    log = open(args.log, "a") if args.log else None  # noqa: SIM115 (closed below)
    try:
        with multiprocessing.Pool(args.workers) as pool, \
                tqdm(total=sum(len(j.deal_list) or j.count for j in jobs), unit="deal") as bar:
            for job, out in pool.imap_unordered(run_batch, jobs):
                key = rows.setdefault(job.row(), job)
                acc = results.setdefault(key, Outcome())
                for name in ("scores", "deals", "wall", "cpu"):
                    getattr(acc, name).extend(getattr(out, name))
                if log is not None:
                    for deal, score, cpu in zip(out.deals, out.scores, out.deal_cpu, strict=True):
                        log.write(json.dumps(runlog.record(job, deal, score, cpu)) + "\n")
                    log.flush()
                bar.update(len(job.deal_list) or job.count)
                if stop_at is not None and time.perf_counter() > stop_at:
                    print("time is up: partial results", file=sys.stderr)
                    break
    except KeyboardInterrupt:  # print what was played so far (a run cut short for time)
        print("interrupted: partial results", file=sys.stderr)
    finally:
        if log is not None:
            log.close()
    elapsed = time.perf_counter() - started
    budget = f"{args.iterations} iterations" if args.iterations else "hard: its iteration cap, as the service"
    if args.budget_ms:
        budget += f", budget {args.budget_ms} ms {args.clock}"
    settings = f"searchers: {budget}; seed {args.seed}; {args.workers} workers; {elapsed / 60:.1f} min wall"
    blocks = []
    for g in games:
        variant = args.variant or variants.DEFAULT[g]
        teams = bool(variants.options(g, variant, args.players).get("teams"))
        title = f"{g} [{variant}], {args.players} players"
        found = [(k.level, k.opponent, results[k]) for k in results if k.game == g]
        blocks.append(table(title, (2 if teams else 1) / args.players, found, args.players, settings))
    text = "\n\n".join(blocks)
    print(text)
    if args.scores:
        pathlib.Path(args.scores).write_text(json.dumps(
            {k.row(): dict(zip(out.deals, out.scores, strict=True)) for k, out in results.items()}))
    if args.out:
        path = pathlib.Path(args.out)
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a") as f:
            f.write(text + "\n\n")


if __name__ == "__main__":
    main()
