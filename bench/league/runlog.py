"""The league's run logs: one JSON line per finished deal, so that a row grows across runs.

A record (:func:`record`) holds the row (``GAME[variant,Np] LEVEL:OPPONENT``), the seed and deal (a
duplicate deal: the tested level in every seat in turn), the tested level's score on it, the
budget, the CPU time of each of the tested level's decisions with two or more legal moves, and
:func:`bench.league.levels.fingerprint` of both levels (what the hard player was made of when it
played), with the date.  :func:`done` and :func:`missing` let ``bench/tournament.py --log`` skip
the deals a log already holds; :func:`load` reads logs back for ``bench/league_report.py`` and
``bench/paired.py``.  Two records are the same deal of the same row when their :func:`key` and
deal agree; a later line of the same deal replaces an earlier one.  A deal is a function of its
seeds only with an iteration count: under a CPU budget a search stops at whatever deal count the
clock allows, so a rerun of the same deal may play (and score) differently; a log keeps one run of
each deal, and a second run of the same deals belongs under another seed.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import pathlib
from collections.abc import Iterable
from typing import Any, Protocol

from bench.league import levels


class JobLike(Protocol):
    """What a record needs of ``bench/tournament.py``'s job (kept apart to avoid an import cycle)."""

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
    deal_list: tuple[int, ...]

    def row(self) -> str: ...


Key = tuple[str, int, int | None, str, int | None, str, str]


def job_key(job: JobLike) -> Key:
    """Row, seed, budget, clock, iteration cap and the levels' fingerprints of a job's deals."""
    return (job.row(), job.seed, job.budget_ms, "wall" if job.wall_clock else "cpu", job.iterations,
            levels.fingerprint(job.level), levels.fingerprint(job.opponent))


def key(rec: dict[str, Any]) -> Key:
    """:func:`job_key` of the job that wrote ``rec``."""
    return (rec["row"], rec["seed"], rec["budget_ms"], rec["clock"], rec["iterations"],
            rec["level_fp"], rec["opponent_fp"])


def record(job: JobLike, deal: int, score: float, cpu: list[float]) -> dict[str, Any]:
    """The log line of one finished deal (``cpu``: its tested decisions' CPU seconds)."""
    return {"row": job.row(), "game": job.game, "variant": job.variant, "players": job.players,
            "level": job.level, "opponent": job.opponent, "seed": job.seed, "deal": deal,
            "score": score, "budget_ms": job.budget_ms, "clock": "wall" if job.wall_clock else "cpu",
            "iterations": job.iterations, "level_fp": levels.fingerprint(job.level),
            "opponent_fp": levels.fingerprint(job.opponent),
            "cpu_ms": [round(1000 * t, 1) for t in cpu],
            "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")}


def load(paths: Iterable[str | pathlib.Path]) -> list[dict[str, Any]]:
    """Every deal record of the logs (files that do not exist yet hold none; a torn last line, from
    a run killed while writing, is skipped), one per key and deal (the later line wins)."""
    out: dict[tuple[Key, int], dict[str, Any]] = {}
    for path in paths:
        p = pathlib.Path(path)
        if not p.exists():
            continue
        for line in p.read_text().splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue
            if "deal" in rec:  # the older batch lines (``scores``) have no key: bench/paired.py reads them
                out[(key(rec), rec["deal"])] = rec
    return list(out.values())


def done(path: str | pathlib.Path) -> set[tuple[Key, int]]:
    """The (key, deal) pairs a log already holds."""
    return {(key(r), r["deal"]) for r in load([path])}


def missing(jobs: list[Any], held: set[tuple[Key, int]]) -> list[Any]:
    """The jobs cut down to the deals ``held`` lacks (jobs left with none are dropped)."""
    out = []
    for job in jobs:
        k = job_key(job)
        deals = tuple(d for d in range(job.first, job.first + job.count) if (k, d) not in held)
        if deals:
            out.append(dataclasses.replace(job, deal_list=deals))
    return out
