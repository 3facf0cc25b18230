"""A command's CPU path alone, deterministic enough to compare two versions on a noisy machine.

usage: bench/cpu_path.py [--tables 20] [--moves 10] [--reps 20]
       bench/cpu_path.py --callgrind [--tables 20] [--moves 10]

Sets up ``--tables`` two-person Cinquillo tables on a throw-away redis-server (bench/pipeline.py's
setup, not timed), then runs each table's first ``--moves`` scripted moves through what the worker does
for a command between reading it and appending it, from the worker's cached tables: the decide and its
messages (``Planner._decide``), the events' encoding and the messages' JSON (``wire_json``).  No Redis,
asyncio or logging is involved in the measured part, so that its cost is the code's alone.

Without ``--callgrind`` it prints the CPU time (``process_time``) a decision took over ``--reps``
passes: on a shared machine this moves by tens of per cent from run to run.  With ``--callgrind`` it
runs itself once under ``valgrind --tool=callgrind`` collecting only the measured part (it runs inside
``itertools.starmap``, and callgrind's ``--toggle-collect=starmap_next`` counts only that) and prints
the instructions a decision took: the same figure run after run for the same code (PYTHONHASHSEED is
fixed), whatever else the machine does (bench/results/pipeline.txt, 2026-12-06 16:12).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aioredis

from bench import pipeline as bp
from service.domain.events import encode
from service.domain.messages import wire_json
from service.foundation import logs
from service.foundation.settings import Settings


async def _setup(url: str, tables: int, moves: int) -> tuple[Any, bp.Planned]:
    logs.configure("WARNING")
    settings = Settings(redis_url=url, key_prefix=bp.PREFIX, turn_seconds=0, batch=256, block_ms=5)
    r = aioredis.from_url(url)
    await bp.clean(r)
    try:
        worker = bp.timed_worker(r, settings, timers=False)
        scripted = await bp.setup_tables(r, settings, tables, worker)
        return worker, bp.next_commands(scripted, tables * moves, worker.keys)
    finally:
        await bp.clean(r)
        await r.aclose()


def measure(tables: int, moves: int, reps: int) -> tuple[int, float]:
    """Decide the planned moves ``reps`` times from the cached tables; (decisions, CPU seconds)."""
    proc, url = bp.start_redis(None)
    try:
        worker, planned = asyncio.run(_setup(url, tables, moves))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    planner, cache = worker.planner, worker.loader.cache
    start = {table: cache[table] for _, table, _ in planned}
    ctx = planner.context()

    def one_pass(_: int) -> int:
        tables_now = dict(start)
        for _, table, cmd in planned:
            d, msgs, _outcome = planner._decide(tables_now[table], cmd, ctx, None)
            for ev in d.events:
                encode(ev, at=ctx.now, cmd=cmd.id)
            for m in msgs:
                wire_json(m)
            tables_now[table] = d.after
        return len(planned)

    one_pass(0)  # warm: the caches of identities, requests and moves
    t0 = time.process_time()
    done = sum(itertools.starmap(one_pass, [(i,) for i in range(reps)]))
    return done, time.process_time() - t0


def under_callgrind(tables: int, moves: int) -> int:
    """Run one pass under callgrind (bench/instructions.py's run, counting inside ``starmap``); print
    and return the instructions a decision took."""
    from bench.instructions import _callgrind

    args = [__file__, "--tables", str(tables), "--moves", str(moves), "--reps", "1"]
    total = _callgrind(args, toggle=True)["Ir"]
    per = total // (tables * moves)
    print(f"cpu path: {per:,} instructions a decision ({total:,} for {tables * moves} decisions, callgrind)")
    return per


def main() -> None:
    """Parse the arguments, measure, print."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=20)
    ap.add_argument("--moves", type=int, default=10)
    ap.add_argument("--reps", type=int, default=20)
    ap.add_argument("--callgrind", action="store_true", help="count instructions under callgrind instead")
    a = ap.parse_args()
    if a.callgrind:
        under_callgrind(a.tables, a.moves)
        return
    done, cpu = measure(a.tables, a.moves, a.reps)
    print(f"cpu path: {cpu / done * 1e6:.1f} us a decision (process time, {done} decisions)")


if __name__ == "__main__":
    main()
