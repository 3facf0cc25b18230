"""Does a worker freeze for other tables while hard AI players think?  Measured on a real Redis.

usage: python bench/ai_latency.py [--ai-tables 4] [--seconds 20] [--rate 20] [--in-loop]

Starts its own ``redis-server`` on a free loopback port.  One worker (in this process, with its
timers, as in production) serves ``--ai-tables`` 535 tables of three hard AI players and a person
(who creates the table, adds the bots and starts it; the benchmark sends that person's moves,
the medium player's, as soon as it is their turn) and one Cinquillo table of two people.  For
``--seconds`` the people's table gets ``/hand`` commands at ``--rate`` per second; the figure is
the latency of those commands, from submission to their appended outbox message (p50 / p99 /
max), beside the number of AI moves made meanwhile.  ``--in-loop`` makes the hard decisions on
the event loop (the old way, for reference); by default they are thought in another process
(``service.write.bots.Thinker``).
"""

from __future__ import annotations

import argparse
import asyncio
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time
from typing import Any

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import redis.asyncio as aioredis

import engine
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.tables.state import RUNNING
from service.foundation import logs
from service.foundation.settings import Settings
from service.ops.runtime import build
from service.write import bots
from service.write.gateway import Gateway
from service.write.worker import Worker
from tools.loopback import free_port


class Timing:
    """Records per command of the watched table its latency from submission to append + outbox, and
    the AI moves (an observer of the worker's finishing stage)."""

    def __init__(self, worker: Worker) -> None:
        self.watched = ""
        self.latencies: list[float] = []
        self.ai_moves = 0
        worker.finisher.observers.append(self)

    def __call__(self, cmd: Any, version: int, outcome: str, now: float) -> None:
        if cmd.table == self.watched and cmd.name == "hand" and cmd.at:
            self.latencies.append(time.time() - cmd.at)
        if cmd.name == "tick" and outcome == "ok":
            self.ai_moves += 1


async def drive(gw: Gateway, worker: Worker, tables: list[tuple[Player, Room]]) -> None:
    """Send the person's move (the medium player's) at each AI table whenever it is their turn."""
    sent: dict[str, int] = {}
    while True:
        for who, room in tables:
            table = await gw.table_of(room)
            if table is None:
                continue
            t = worker.loader.cache.get(table)  # the worker's own copy: loading it would cost a replay
            if t is not None and t.status == RUNNING and t.to_move() == 0 and sent.get(table) != t.version:
                sent[table] = t.version
                move = bots.choose_move(engine.view(t.engine, 0), "medium", t.version)
                await gw.submit(Input(who, room), f"/move {move}")
        await asyncio.sleep(0.05)


async def measure(port: int, n_ai: int, seconds: float, rate: float, in_loop: bool) -> dict[str, Any]:
    """Set the tables up, run the worker, send the people's commands; the figures."""
    r = aioredis.Redis(host="127.0.0.1", port=port)
    settings = Settings(redis_url=f"redis://127.0.0.1:{port}/0", turn_seconds=0, block_ms=5)
    rt = build(settings, r, choose_move=bots.choose_move if in_loop else None)
    gw, worker = rt.gateway, rt.worker
    timing = Timing(worker)
    task = asyncio.create_task(worker.run())
    ai_tables: list[tuple[Player, Room]] = []
    for i in range(n_ai):
        who = Player(platform="bench", user=f"p{i}")
        room = Room(platform="bench", chat=f"ai{i}", kind="group")
        for text in ("/new 535", "/bots 3 hard", "/start"):
            await gw.submit(Input(who, room), text)
            await asyncio.sleep(0.05)
        ai_tables.append((who, room))
    driver = asyncio.create_task(drive(gw, worker, ai_tables))
    a, b = Player(platform="bench", user="ana"), Player(platform="bench", user="bea")
    room = Room(platform="bench", chat="people", kind="group")
    for who, text in ((a, "/new cinquillo"), (b, "/join"), (a, "/start")):
        await gw.submit(Input(who, room), text)
        await asyncio.sleep(0.1)
    table = await gw.table_of(room)
    assert table is not None, "the people's table was not created"
    timing.watched = table
    await asyncio.sleep(2.0)  # every AI table is playing by now
    timing.latencies, timing.ai_moves = [], 0
    t0 = time.perf_counter()
    sent = 0
    while time.perf_counter() - t0 < seconds:
        await gw.submit(Input([a, b][sent % 2], room), "/hand")
        sent += 1
        await asyncio.sleep(1 / rate)
    await asyncio.sleep(1.0)
    driver.cancel()
    worker.stop.set()
    await task
    if worker.thinker is not None:
        worker.thinker.close()
    await r.aclose()
    lat = sorted(x * 1000 for x in timing.latencies)
    pick = (lambda q: lat[min(len(lat) - 1, int(q * len(lat)))]) if lat else (lambda q: float("nan"))
    return {"sent": sent, "answered": len(lat), "p50": pick(0.5), "p99": pick(0.99),
            "max": lat[-1] if lat else float("nan"), "ai_moves": timing.ai_moves}


def main() -> None:
    """Start Redis, measure, print the figures, stop Redis."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ai-tables", type=int, default=4)
    ap.add_argument("--seconds", type=float, default=20)
    ap.add_argument("--rate", type=float, default=20)
    ap.add_argument("--in-loop", action="store_true")
    a = ap.parse_args()
    server = shutil.which("redis-server")
    assert server, "redis-server is needed"
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        proc = subprocess.Popen([server, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                 "--appendonly", "no", "--dir", tmp], stdout=subprocess.DEVNULL)
        try:
            time.sleep(0.3)
            logs.configure("WARNING")  # the per-command log lines would cost more than the commands
            f = asyncio.run(measure(port, a.ai_tables, a.seconds, a.rate, a.in_loop))
        finally:
            proc.terminate()
            proc.wait()
    how = "on the event loop" if a.in_loop else "in another process (bots.Thinker)"
    print(f"# {a.ai_tables} tables of 3 hard AI players and a scripted person (decided {how}) "
          "+ 1 table of 2 people")
    print(f"people's /hand: sent {f['sent']}, answered {f['answered']}; latency ms p50 {f['p50']:.1f} "
          f"p99 {f['p99']:.1f} max {f['max']:.1f}; AI moves meanwhile: {f['ai_moves']}")


if __name__ == "__main__":
    main()
