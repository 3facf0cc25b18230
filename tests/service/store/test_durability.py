"""Durability: Redis with ``appendfsync always`` is killed with SIGKILL while a worker process plays
matches; after a restart on the same data directory, every move whose outcome reached the player (its
outbox message arrived) is still in its table's stream, and every match goes on to its end.

The test is the adapter: it plays one person per table (against an AI player) by sending back the
first action token of each new ``hand`` message, and reads the outbox as a chat adapter would.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from redis.exceptions import RedisError

from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.tables.replay import verify
from service.ops.runtime import worker_for
from service.store.keys import Keys
from service.store.repository import history, load
from service.write.gateway import Gateway
from tests.service.support import SECRET, settings, stop_processes
from tools.loopback import free_port

TABLES = 6
BUCKETS, SHARDS = 16, 2
STALL_S = 2.5  # no news of a table for this long: send its last token again (it may have been lost)
pytestmark = pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs redis-server")


def _redis_server(port: int, data: Path) -> subprocess.Popen:
    proc = subprocess.Popen(["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "yes", "--appendfsync", "always", "--dir", str(data)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=0.2) as s:
            s.sendall(b"PING\r\n")
            if s.recv(64).startswith(b"+PONG"):  # not "-LOADING": the AOF has been read
                return proc
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("redis-server did not start")


def _worker(url: str) -> subprocess.Popen:
    env = {**os.environ, "REDIS_URL": url, "CINQ_BUCKETS": str(BUCKETS), "CINQ_COMMAND_SHARDS": str(SHARDS),
           "CINQ_CLAIM_IDLE_MS": "400", "CINQ_HTTP_PORT": "0", "CINQ_LOG_LEVEL": "ERROR",
           "CINQ_TURN_SECONDS": "0", "CINQ_BATCH": "16", "CINQ_TIMER_INTERVAL": "0.2",
           # The tokens the worker signs are opened by this test's gateway: the same secret.
           "CINQ_TOKEN_SECRETS": json.dumps([SECRET.decode()])}
    return subprocess.Popen([sys.executable, "-m", "service.ops.cli", "worker"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


class Players:
    """One person per table, playing the first legal move each time it is their turn."""

    def __init__(self, r: Any, gw: Gateway) -> None:
        self.r, self.gw = r, gw
        self.positions = {gw.keys.outbox(b): "0-0" for b in range(BUCKETS)}
        self.people = {f"p{i}": Player(platform="dur", user=f"p{i}") for i in range(TABLES)}
        # /play is for a private chat (service/protocol/chats.py): each person plays in their own.
        self.rooms = {u: Room(platform="dur", chat=f"r{u}", kind="private") for u in self.people}
        self.turn: dict[str, tuple[int, str, str]] = {}  # table -> (version, user, token) to play
        self.sent: dict[str, tuple[int, float]] = {}  # table -> (version played, when)
        self.pending: dict[str, str] = {}  # command id -> table, until its outcome arrives
        self.acked: list[tuple[str, str]] = []  # (table, command id) of moves the player saw applied
        self.over: set[str] = set()
        self.news: dict[str, float] = {}

    async def read(self) -> None:
        resp = await self.r.xread(self.positions, count=500, block=100)
        for stream, entries in resp or []:
            for mid, f in entries:
                self.positions[stream.decode()] = mid.decode()
                self._seen(f[b"c"].decode(), json.loads(f[b"m"]))

    def _seen(self, cid: str, m: dict[str, Any]) -> None:
        table = m.get("table")
        if table is None:
            return
        self.news[table] = time.monotonic()
        if cid in self.pending and m.get("code") is None and m["version"] > 0:
            # The move's outcome (its table or hand message, written in the same Lua call as the
            # events) reached the player: from now on it must never be lost.
            self.acked.append((self.pending.pop(cid), cid))
        if m["kind"] == "match_over":
            self.over.add(table)
        to = (m.get("to") or {}).get("player")
        if m["kind"] == "hand" and to and m["actions"] and m["version"] >= self.turn.get(table, (-1,))[0]:
            self.turn[table] = (m["version"], to["user"], m["actions"][0]["token"])

    async def play(self) -> None:
        now = time.monotonic()
        for table, (version, user, token) in list(self.turn.items()):
            if table in self.over:
                continue
            last = self.sent.get(table)
            stalled = last is not None and now - max(last[1], self.news.get(table, 0)) > STALL_S
            if last is None or last[0] < version or stalled:
                cid = await self.gw.submit(Input(self.people[user], self.rooms[user]), token=token)
                self.pending[cid] = table
                self.sent[table] = (version, now)


async def test_acknowledged_moves_survive_a_redis_sigkill(tmp_path):
    port = free_port()
    url = f"redis://127.0.0.1:{port}/0"
    server = _redis_server(port, tmp_path)
    workers = [_worker(url)]
    r = aioredis.from_url(url)
    s = settings(buckets=BUCKETS, command_shards=SHARDS)
    gw = Gateway(r, s, Keys.of(s))
    await worker_for(r, s).setup()
    p = Players(r, gw)
    report: dict[str, Any] = {}
    try:
        for user, person in p.people.items():
            await gw.submit(Input(person, p.rooms[user]), "/play cinquillo 2")
        deadline = time.monotonic() + 60
        killed_at = None
        while time.monotonic() < deadline and len(p.over) < TABLES:
            try:
                await p.read()
                await p.play()
            except (RedisError, OSError):
                await asyncio.sleep(0.1)  # Redis is down or restarting: the client reconnects
                continue
            if killed_at is None and len(p.acked) >= TABLES * 4:
                # Mid-load: moves are in flight in both directions.
                server.send_signal(signal.SIGKILL)
                server.wait()
                killed_at = len(p.acked)
                server = _redis_server(port, tmp_path)
                if workers[0].poll() is not None:  # it should reconnect; if it died, say so
                    report["worker_died"] = workers[0].returncode
                    workers.append(_worker(url))
        assert killed_at is not None, (f"Redis was never killed: {len(p.acked)} moves acknowledged, "
                                       f"{len(p.turn)} tables seen, {len(p.over)} over; worker: "
                                       + (workers[0].stderr.read().decode()[-800:]
                                          if workers[0].poll() is not None else "running"))
        await asyncio.sleep(0.5)
        assert workers[-1].poll() is None, "the worker did not survive the Redis restart"
        assert len(p.over) == TABLES, f"{len(p.over)} of {TABLES} matches finished"
        assert len(p.acked) > killed_at, "no move was acknowledged after the restart"
        store = worker_for(r, s).store
        for table in {t for t, _ in p.acked}:
            cmds = {json.loads(e)["cmd"] for e in await store.events(table)}
            lost = [cid for t, cid in p.acked if t == table and cid not in cmds]
            assert not lost, f"acknowledged moves lost in {table}: {lost}"
            t = await load(store, table)
            assert t is not None and t.status == "finished"
            assert verify(await history(store, table)).ok
        assert "worker_died" not in report, report
    finally:
        stop_processes(workers)
        with contextlib.suppress(Exception):
            await r.aclose()
        server.kill()
        server.wait()
