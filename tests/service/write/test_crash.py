"""Crash: worker processes on a real Redis, one killed with SIGKILL under load.  The others take its
pending commands over (XAUTOCLAIM) and finish every match; no command is applied twice, and every
table's stream replays to its recorded result."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

from service.domain.events import decode
from service.domain.inputs import Input
from service.domain.tables.replay import verify
from service.ops.runtime import worker_for
from service.store.keys import Keys
from service.store.repository import history, load
from service.write.gateway import Gateway
from tests.service.support import SECRET, Player, Room, settings, stop_processes

TABLES = 24


def _spawn(url: str) -> subprocess.Popen:
    env = {**os.environ, "REDIS_URL": url, "CINQ_BUCKETS": "16", "CINQ_COMMAND_SHARDS": "2",
           "CINQ_CLAIM_IDLE_MS": "400", "CINQ_LEASE_MS": "1000",
           "CINQ_HTTP_PORT": "0", "CINQ_LOG_LEVEL": "WARNING",
           "CINQ_TURN_SECONDS": "0", "CINQ_BATCH": "16", "CINQ_TIMER_INTERVAL": "0.2",
           "CINQ_TOKEN_SECRETS": json.dumps([SECRET.decode()])}
    return subprocess.Popen([sys.executable, "-m", "service.ops.cli", "worker"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


async def _until_joined(redis: Any, keys: Keys, procs: list[subprocess.Popen], deadline: float) -> None:
    """Wait until every worker process has joined the workers' members (service.store.leases): it
    then runs its loop under ``run_until_stopped``, whose SIGTERM handler is installed before the
    loop starts.  A process still importing or connecting when the test ends would die of the SIGTERM
    meant to stop it gracefully (-15), which says nothing of how a running worker stops."""
    live = 0
    while time.monotonic() < deadline:
        assert all(p.poll() is None for p in procs), [p.stderr.read()[-500:] for p in procs if p.stderr]
        now_ms = int(time.time() * 1000)
        live = await redis.zcount(keys.worker_members(), now_ms, "+inf")
        if live >= len(procs):
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"only {live} of {len(procs)} workers joined")


async def test_sigkill_a_worker_mid_load(real_redis, real_redis_url):
    s = settings(buckets=16, command_shards=2)
    gw = Gateway(real_redis, s, Keys.of(s))
    await worker_for(real_redis, s).setup()
    procs = [_spawn(real_redis_url) for _ in range(3)]
    try:
        deadline = time.monotonic() + 60
        await _until_joined(real_redis, gw.keys, procs, deadline)
        rooms = [Room(platform="crash", chat=str(i)) for i in range(TABLES)]
        people = [Player(platform="crash", user=str(i)) for i in range(TABLES)]
        for i, (p, room) in enumerate(zip(people, rooms, strict=True)):
            await gw.submit(Input(p, room), "/play 535 3" if i % 2 else "/play cinquillo 4")
        tables: list[str] = []
        while time.monotonic() < deadline and len(tables) < TABLES:
            # The gateway points a room at its new table at once: wait for the tables themselves.
            tables = [t for r in rooms
                      if (t := await gw.table_of(r)) and await real_redis.xlen(gw.keys.events(t))]
            await asyncio.sleep(0.05)
        assert len(tables) == TABLES
        for p, room in zip(people, rooms, strict=True):
            await gw.submit(Input(p, room), "/leave")  # AI players play every seat to the end
        # Under load: wait until matches are moving, then kill one worker outright.
        while time.monotonic() < deadline:
            versions = [await real_redis.xlen(gw.keys.events(t)) for t in tables]
            if sum(versions) > TABLES * 8:
                break
            await asyncio.sleep(0.02)
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        store = worker_for(real_redis, s).store
        while time.monotonic() < deadline:
            states = [await load(store, t) for t in tables]
            if all(t.status == "finished" for t in states):
                break
            await asyncio.sleep(0.1)
        assert all(t.status == "finished" for t in states), [t.status for t in states]
        for t in tables:
            stored = await history(store, t)
            assert verify(stored).ok
            runs: dict[str, list[int]] = {}
            for v, st in enumerate(stored, 1):
                runs.setdefault(st.cmd, []).append(v)
            assert all(vs == list(range(vs[0], vs[0] + len(vs))) for vs in runs.values()), "applied twice"
            raw = await store.events(t)
            assert [decode(r).event for r in raw] == [st.event for st in stored]
        out_ids = []
        for b in range(16):
            out_ids += [json.loads(f[b"m"])["id"] for _, f in await real_redis.xrange(gw.keys.outbox(b))]
        assert len(out_ids) == len(set(out_ids)), "an outbox message written twice"
    finally:
        stop_processes(procs)
    # The survivors stopped gracefully on SIGTERM.
    assert [p.returncode for p in procs[1:]] == [0, 0], [p.stderr.read()[-500:] for p in procs[1:]]
