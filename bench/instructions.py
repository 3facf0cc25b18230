"""The worker's instructions per command against the bare pipeline's, counted by callgrind.

usage: bench/instructions.py [--tables 100] [--commands 1000] [--check MAX] [--unfrozen] [--cycles]

``bench/pipeline.py`` divides two rates measured in seconds, and which of the two a machine favours
depends on the machine: the bare pipeline is one round trip per command (its cost is mostly system
calls and Redis), the service a batch per round trip (its cost is mostly the interpreter over a large
heap).  The same unchanged code gave 0.60-0.90x on one machine of this kind (stop 50, its CI run), and
0.95-1.78x on another within two hours (stop 51).  Instructions do not depend on the machine:
callgrind counts them the same run after run for the same code, Python and inputs (PYTHONHASHSEED
fixed), whatever else the machine is doing (bench/results/pipeline.txt).  So the guard of the hot
path (issue 33) is this ratio:

* the service: ``--tables`` two-person Cinquillo tables are set up (bench/pipeline.py's set-up, not
  counted), the heap frozen as ``Worker.run`` does, ``--commands`` scripted moves written to the
  command streams, and one worker drains them, under ``valgrind --tool=callgrind`` counting only the
  drain (it runs inside ``itertools.starmap``, and ``--toggle-collect=starmap_next`` counts only
  that): decide, messages, encoding, the Redis client, asyncio and the garbage collector, everything
  the worker's process executes for those commands;
* the bare pipeline of the design (bench/bare_pipeline.py, the reference, unchanged): run twice under
  callgrind with N and 2N commands; the difference over N is its instructions per command (its
  start-up and set-up cancel out; the producer's pipelined XADD of each command is counted with it).

It prints both and their ratio; ``--check MAX`` exits 1 when the ratio is above MAX.  ``--unfrozen``
skips the heap's freezing and the young generation's threshold (the regression issue 33 found, for
showing that the guard catches it).  A Redis server of its own is started on a free loopback port;
Redis itself runs natively (its instructions are not the worker's).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import redis.asyncio as aioredis

from bench import pipeline as bp
from service.foundation import logs
from service.foundation.settings import Settings

TOGGLE = "starmap_next"  # the C function that is on the stack exactly while the drain runs
CACHE_SIM = False  # --cycles: simulate the caches too and print estimated cycles (2.5x slower)


# The simulated caches are fixed (callgrind otherwise takes the host's, which differ between machines):
# 32 KiB 8-way L1 instruction and data caches and an 8 MiB 16-way last level, 64-byte lines.
CACHES = ["--I1=32768,8,64", "--D1=32768,8,64", "--LL=8388608,16,64"]


def cycles(counts: dict[str, int]) -> int:
    """Estimated cycles from callgrind's counts: an L1 hit 1, a last-level hit 5, a miss to memory 35
    (the weights of iai-callgrind and of Nethercote's cachegrind notes).  The garbage collector's
    cost is memory traffic over a large heap more than instructions: this weighs it."""
    l1_miss = counts["I1mr"] + counts["D1mr"] + counts["D1mw"]
    ram = counts["ILmr"] + counts["DLmr"] + counts["DLmw"]
    accesses = counts["Ir"] + counts["Dr"] + counts["Dw"]
    return (accesses - l1_miss) + 5 * (l1_miss - ram) + 35 * ram


def _callgrind(args: list[str], toggle: bool) -> dict[str, int]:
    """Run ``python args`` under callgrind; the counts it made (only inside TOGGLE if ``toggle``): Ir,
    and with CACHE_SIM (``--cycles``) Dr, Dw and the misses as well."""
    if shutil.which("valgrind") is None:
        sys.exit("bench/instructions.py needs valgrind (apt-get install valgrind)")
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        cmd = ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
        if CACHE_SIM:
            cmd += ["--cache-sim=yes", *CACHES]
        if toggle:
            cmd += ["--collect-atstart=no", f"--toggle-collect={TOGGLE}"]
        env = {**os.environ, "PYTHONHASHSEED": "0"}
        done = subprocess.run([*cmd, sys.executable, *args], env=env, capture_output=True, text=True)
        if done.returncode != 0:
            sys.exit(f"callgrind run failed ({done.returncode}): {' '.join(args)}\n{done.stderr[-2000:]}")
        text = out.read_text()
    events = re.search(r"^events: (.+)$", text, re.M)
    summary = re.search(r"^summary: (.+)$", text, re.M)
    if events is None or summary is None:
        sys.exit("callgrind wrote no summary")
    return dict(zip(events.group(1).split(), map(int, summary.group(1).split()), strict=True))


def service_counts(url: str, tables: int, commands: int, unfrozen: bool) -> dict[str, int]:
    """callgrind's counts for the worker's drain of ``commands`` scripted moves."""
    args = [__file__, "--inside", url, "--tables", str(tables), "--commands", str(commands)]
    return _callgrind(args + (["--unfrozen"] if unfrozen else []), toggle=True)


def bare_counts(url: str, commands: int, tables: int) -> dict[str, int]:
    """callgrind's counts for N commands of the bare pipeline: C(2N) - C(N)."""
    one = _callgrind([str(bp.BARE), url, str(commands), str(tables)], toggle=False)
    two = _callgrind([str(bp.BARE), url, str(2 * commands), str(tables)], toggle=False)
    return {k: two[k] - one[k] for k in two}


def inside(url: str, tables: int, commands: int, unfrozen: bool) -> None:
    """Under callgrind: set up (not counted), then drain the commands inside ``starmap`` (counted)."""
    logs.configure("WARNING")
    settings = Settings(redis_url=url, key_prefix=bp.PREFIX, turn_seconds=0, batch=256, block_ms=5)
    loop = asyncio.new_event_loop()
    r = aioredis.from_url(url)

    async def setup() -> Any:
        await bp.clean(r)
        worker = bp.timed_worker(r, settings, timers=False)
        scripted = await bp.setup_tables(r, settings, tables, worker)
        planned = bp.next_commands(scripted, commands, worker.keys)
        for i in range(0, len(planned), 1000):
            await bp.xadd_all(r, planned[i:i + 1000], stamp=False)
        await worker.setup()
        return worker

    worker = loop.run_until_complete(setup())
    if not unfrozen:
        worker.freeze_heap()  # as Worker.run does at its start
    else:
        gc.set_threshold(700, 10, 10)  # CPython's default: the worker before issue 33's fix

    def drain(_: int) -> int:
        return int(loop.run_until_complete(worker.drain()))

    done = sum(itertools.starmap(drain, [(0,)]))
    loop.run_until_complete(bp.clean(r))
    loop.run_until_complete(r.aclose())
    loop.close()
    if done != commands:
        sys.exit(f"drained {done} commands, not {commands}")


def main() -> int:
    """Parse the arguments, count, print; 1 when ``--check`` fails."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=100)
    ap.add_argument("--commands", type=int, default=1000)
    ap.add_argument("--check", type=float, default=None, metavar="MAX",
                    help="exit 1 when the service's instructions per command exceed MAX x the bare's")
    ap.add_argument("--unfrozen", action="store_true", help="the heap not frozen, CPython's gc thresholds")
    ap.add_argument("--cycles", action="store_true", help="simulate the caches too: estimated cycles")
    ap.add_argument("--inside", metavar="REDIS_URL", help=argparse.SUPPRESS)
    a = ap.parse_args()
    global CACHE_SIM
    CACHE_SIM = a.cycles
    if a.inside:
        inside(a.inside, a.tables, a.commands, a.unfrozen)
        return 0
    proc, url = bp.start_redis(None)
    try:
        service = service_counts(url, a.tables, a.commands, a.unfrozen)
        bare = bare_counts(url, a.commands, a.tables)
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    n = a.commands
    ratio = service["Ir"] / bare["Ir"]
    print(f"service worker: {service['Ir'] / n:,.0f} instructions per command ({n} scripted moves over "
          f"{a.tables} tables{', heap unfrozen' if a.unfrozen else ''}, callgrind)")
    print(f"bare pipeline: {bare['Ir'] / n:,.0f} instructions per command (callgrind)")
    print(f"instructions ratio service/bare: {ratio:.3f}")
    if CACHE_SIM:
        print(f"estimated cycles per command: service {cycles(service) / n:,.0f}, "
              f"bare {cycles(bare) / n:,.0f}, ratio {cycles(service) / cycles(bare):.3f}")
    if a.check is not None and ratio > a.check:
        print(f"FAIL: the worker executes {ratio:.3f}x the bare pipeline's instructions per command, "
              f"above the ceiling of {a.check}x")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
