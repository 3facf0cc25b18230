"""A randomized, seeded fault run over real processes: ``run(...) -> ChaosReport``.

An AOF redis-server, the fault proxy in front of it (in this process), ``workers`` ``cinq worker``
processes and one ``cinq webhook`` process (both on the proxy), and a chat platform on loopback
(:mod:`tests.faults.platform`).  ``tables`` group matches are scripted over signed HTTP: ``a<i>``
opens a Cinquillo table in ``g<i>``, ``b<i>`` joins, ``a<i>`` starts, both press buttons of their
private hands for ``human_moves`` moves, then both leave and AI players finish the match.  Every
request is retried with the same ``webhook-id`` on 5xx, 429 and connection errors, as Standard
Webhooks senders do; a stage that hears nothing for ``stall_s`` is given up (the report tells).

Meanwhile, at seeded random times: ``worker_kills`` SIGKILLs of a worker (a new one is started),
one SIGKILL of Redis and its restart (``redis_kill``), ``oom_windows`` windows of real OOM refusals, and
``connection_kills`` of every connection at the proxy.  Then it waits for quiescence (every
acknowledged command acted on, every callback received, every table over; at most ``quiesce_s``)
and accounts (:mod:`tests.faults.chaos_report`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import aiohttp
import redis.asyncio as aioredis

from adapters.webhook import signing
from adapters.webhook.app import command_id
from service.store.keys import Keys
from tests.faults import oom
from tests.faults.chaos_report import ChaosReport, account, percentiles
from tests.faults.platform import Receiver
from tests.faults.proxy import Proxy
from tests.faults.redis_server import RedisServer
from tools.loopback import free_port

PLATFORM = "acme"
SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
TOKEN_SECRET = "chaos-token-secret-of-more-than-32-bytes"
BUCKETS, SHARDS = 16, 4


def _env(url: str, **extra: str) -> dict[str, str]:
    return {**os.environ, "REDIS_URL": url, "CINQ_BUCKETS": str(BUCKETS), "CINQ_COMMAND_SHARDS": str(SHARDS),
            "CINQ_TOKEN_SECRETS": json.dumps([TOKEN_SECRET]), "CINQ_TURN_SECONDS": "0",
            "CINQ_BOT_LEVEL": "easy", "CINQ_LOG_LEVEL": "WARNING", "CINQ_HTTP_PORT": "0",
            # the accounting reads every outbox entry after the run: retention keeps them for an hour
            "CINQ_OUTBOX_KEEP_S": "3600", **extra}


class Run:
    """One chaos run's processes, clients and records."""

    def __init__(self, seed: int, workdir: Path, workers: int, claim_idle_ms: int, stall_s: float) -> None:
        self.rng = random.Random(seed)
        self.dir = workdir
        self.server = RedisServer(workdir / "redis")
        self.proxy = Proxy(self.server)
        self.receiver = Receiver([SECRET])
        self.n_workers, self.claim_idle_ms, self.stall_s = workers, claim_idle_ms, stall_s
        self.procs: list[subprocess.Popen[bytes]] = []
        self.webhook: subprocess.Popen[bytes] | None = None
        self.port = free_port()
        self.keys = Keys(BUCKETS, SHARDS, "")
        self.acked: dict[str, float] = {}  # command id -> its first attempt
        self.accepted: dict[str, float] = {}  # command id -> the start of the attempt answered 2xx
        self.unacked: list[str] = []
        self.statuses: dict[str, int] = {}
        self.attempts = 0
        self.faults: list[str] = []
        self.t0 = time.monotonic()
        self.restart_window: tuple[float, float] | None = None
        self._wids = 0
        self.opened: set[int] = set()  # tables whose /new was sent
        self.left: set[tuple[int, str]] = set()  # (table, person) whose /leave was acknowledged

    def note(self, what: str) -> None:
        self.faults.append(f"{time.monotonic() - self.t0:.1f}s {what}")

    def _spawn(self, args: list[str], env: dict[str, str], name: str) -> subprocess.Popen[bytes]:
        log = open(self.dir / f"{name}.log", "ab")  # noqa: SIM115 (the process owns it)
        return subprocess.Popen([sys.executable, "-m", "service.ops.cli", *args], env=env,
                                stdout=subprocess.DEVNULL, stderr=log)

    def spawn_worker(self) -> None:
        env = _env(self.proxy.url, CINQ_CLAIM_IDLE_MS=str(self.claim_idle_ms), CINQ_LEASE_MS="2000",
                   CINQ_TIMER_INTERVAL="0.5")
        self.procs.append(self._spawn(["worker"], env, f"worker{len(self.procs)}"))

    async def start(self) -> None:
        await asyncio.to_thread(self.server.start)
        await self.proxy.start()
        url = await self.receiver.start()
        platforms = [{"name": PLATFORM, "secrets": [SECRET], "callback_url": url}]
        env = _env(self.proxy.url, CINQ_WEBHOOK_PLATFORMS=json.dumps(platforms),
                   CINQ_WEBHOOK_PORT=str(self.port),
                   CINQ_WEBHOOK_RATE="10000", CINQ_WEBHOOK_BURST="10000", CINQ_WEBHOOK_MAX_ATTEMPTS="100",
                   CINQ_WEBHOOK_BACKOFF_BASE_S="0.05", CINQ_WEBHOOK_BACKOFF_CAP_S="1")
        self.webhook = self._spawn(["webhook"], env, "webhook")
        for _ in range(self.n_workers):
            self.spawn_worker()
        async with aiohttp.ClientSession() as s:
            for _ in range(600):
                with contextlib.suppress(aiohttp.ClientError, OSError):
                    async with s.get(f"http://127.0.0.1:{self.port}/healthz") as r:
                        if r.status == 200:
                            return
                await asyncio.sleep(0.1)
        raise RuntimeError("the webhook adapter did not start")

    async def stop(self) -> None:
        for p in [*self.procs, self.webhook]:
            if p is not None and p.poll() is None:
                p.send_signal(signal.SIGKILL)
                p.wait()
        await self.receiver.close()
        await self.proxy.close()
        self.server.stop()

    # -- the platform's requests ---------------------------------------------------------------------

    async def send(self, session: aiohttp.ClientSession, payload: dict[str, Any],
                   deadline: float) -> str | None:
        """POST one event until it is accepted (same webhook-id); returns its command id, or None."""
        self._wids += 1
        wid = f"chaos-{self._wids}"
        cid = command_id(PLATFORM, wid)
        body = json.dumps(payload).encode()
        first = time.monotonic()
        url = f"http://127.0.0.1:{self.port}/v1/platforms/{PLATFORM}/events"
        pause = 0.1
        while time.monotonic() < deadline:
            self.attempts += 1
            began = time.monotonic()
            hdrs = {**signing.headers([SECRET], wid, int(time.time()), body),
                    "content-type": "application/json"}
            try:
                async with session.post(url, data=body, headers=hdrs,
                                        timeout=aiohttp.ClientTimeout(total=20)) as r:
                    status = r.status
                    await r.read()
            except (aiohttp.ClientError, OSError, TimeoutError):
                status = 0
            self.statuses[str(status)] = self.statuses.get(str(status), 0) + 1
            if 200 <= status < 300:
                self.acked[cid] = first
                self.accepted[cid] = began
                return cid
            if 400 <= status < 500 and status != 429:
                break
            await asyncio.sleep(pause * (0.5 + self.rng.random()))
            pause = min(pause * 2, 2.0)
        self.unacked.append(cid)
        return None

    async def table(self, session: aiohttp.ClientSession, i: int, human_moves: int, deadline: float) -> None:
        """One scripted group match (see the module docstring)."""
        chat, a, b = f"g{i}", f"a{i}", f"b{i}"

        def ev(user: str, text: str | None = None, token: str | None = None,
               kind: str = "group") -> dict[str, Any]:
            base = {"chat": {"id": chat if kind == "group" else f"dm-{user}", "kind": kind},
                    "user": {"id": user, "name": user, "locale": "en"}}
            if token:
                return {"type": "action", **base, "token": token}
            return {"type": "message", **base, "text": text}

        wait = self.receiver.wait
        self.opened.add(i)  # before the send: a cancelled send may still have opened the table
        await self.send(session, ev(a, "/new cinquillo"), deadline)
        if not await wait(f"chat:{chat}", lambda ms: ms, self.stall_s):
            return
        await self.send(session, ev(b, "/join"), deadline)
        if not await wait(f"chat:{chat}", lambda ms: [m for m in ms if m["version"] >= 2], self.stall_s):
            return
        await self.send(session, ev(a, "/start"), deadline)
        acted: set[tuple[str, int]] = set()
        for _ in range(human_moves):
            def turn(ms: list[dict[str, Any]]) -> Any:
                hands = [m for m in ms if m["kind"] == "hand" and m["buttons"]]
                last = hands[-1] if hands else None
                return last if last and (last["to"]["user"]["id"], last["version"]) not in acted else None
            got = None
            for _ in range(int(self.stall_s * 4)):
                for user in (a, b):
                    got = turn(self.receiver.by_key[f"user:{user}"])
                    if got:
                        break
                if got or time.monotonic() > deadline:
                    break
                await asyncio.sleep(0.25)
            if not got:
                break
            user = got["to"]["user"]["id"]
            acted.add((user, got["version"]))
            await self.send(session, ev(user, token=self.rng.choice(got["buttons"])["token"], kind="private"),
                            deadline)
        await self.leave(session, i, deadline)

    async def leave(self, session: aiohttp.ClientSession, i: int, deadline: float) -> None:
        """Both people of table ``i`` leave it (those who have not yet): AI players finish the match,
        or the lobby is cancelled."""
        for user in (f"a{i}", f"b{i}"):
            if (i, user) in self.left:
                continue
            payload = {"type": "message", "chat": {"id": f"g{i}", "kind": "group"},
                       "user": {"id": user, "name": user, "locale": "en"}, "text": "/leave"}
            if await self.send(session, payload, deadline):
                self.left.add((i, user))

    # -- faults ------------------------------------------------------------------------------------------

    async def faults_at(self, plan: list[tuple[float, str]], side: Any) -> None:
        for at, what in sorted(plan):
            await asyncio.sleep(max(0.0, at - (time.monotonic() - self.t0)))
            if what == "worker":
                victim = self.rng.choice([p for p in self.procs if p.poll() is None])
                victim.send_signal(signal.SIGKILL)
                await asyncio.to_thread(victim.wait)
                self.note(f"SIGKILL worker pid {victim.pid}")
                self.spawn_worker()
            elif what == "redis":
                killed = time.monotonic()
                await asyncio.to_thread(self.server.kill)
                self.note("SIGKILL redis-server")
                await asyncio.sleep(0.3 + self.rng.random() * 0.7)
                await asyncio.to_thread(self.server.start)
                self.restart_window = (killed - 1.0, time.monotonic() + 5.0)
                self.note("redis-server restarted")
            elif what == "oom":
                span = 0.2 + self.rng.random() * 0.5
                with contextlib.suppress(Exception):
                    async with oom.window(side):
                        self.note(f"OOM window {span:.2f} s")
                        await asyncio.sleep(span)
            elif what == "connections":
                self.note(f"killed {await self.proxy.kill_connections()} connections at the proxy")


async def run(*, tables: int = 100, workers: int = 2, seed: int = 12, human_moves: int = 4,
              worker_kills: int = 2, oom_windows: int = 3, connection_kills: int = 2, drive_s: float = 60.0,
              quiesce_s: float = 40.0, concurrency: int = 25, claim_idle_ms: int = 30_000,
              stall_s: float = 8.0, redis_kill: bool = True, workdir: Path | None = None) -> ChaosReport:
    """One randomized fault run (see the module docstring); returns its report."""
    report = ChaosReport(seed=seed, tables=tables)
    tmp = None
    if workdir is None:
        tmp = tempfile.TemporaryDirectory(prefix="cinq-chaos-")
        workdir = Path(tmp.name)
    r = Run(seed, workdir, workers, claim_idle_ms, stall_s)
    side: Any = None
    try:
        await r.start()
        side = aioredis.from_url(r.server.url)
        span = drive_s * 0.6  # faults strike while the tables are being played
        plan = [(r.rng.uniform(0.15, 0.35) * span, "redis")] if redis_kill else []
        plan += [(r.rng.uniform(0.05, 1.0) * span, "worker") for _ in range(worker_kills)]
        plan += [(r.rng.uniform(0.05, 1.0) * span, "oom") for _ in range(oom_windows)]
        plan += [(r.rng.uniform(0.05, 1.0) * span, "connections") for _ in range(connection_kills)]
        r.t0 = time.monotonic()
        faults = asyncio.create_task(r.faults_at(plan, side))
        deadline = r.t0 + drive_s
        gate = asyncio.Semaphore(concurrency)
        async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency * 2)) as session:
            async def one(i: int) -> None:
                # Tables start spread over the span the faults strike in: on a quiet machine a match
                # takes a few seconds, and all of them at once would be over before the first fault.
                await asyncio.sleep(max(0.0, r.t0 + i * span / tables - time.monotonic()))
                async with gate:
                    await r.table(session, i, human_moves, deadline)
            drivers = [asyncio.create_task(one(i)) for i in range(tables)]
            await asyncio.wait(drivers, timeout=max(deadline - time.monotonic(), 1.0))
            for d in drivers:
                d.cancel()
            await asyncio.gather(*drivers, return_exceptions=True)
            # A loaded machine cuts some scripts short at the deadline: their people leave now, so that
            # every table that was opened must still come to an end (AI players finish it).
            tail = time.monotonic() + quiesce_s

            async def close(i: int) -> None:
                async with gate:
                    await r.leave(session, i, tail)
            await asyncio.gather(*(close(i) for i in sorted(r.opened)))
        await faults
        report.quiesced = await _quiesce(r, side, quiesce_s)
        await account(report, side, r.keys, r.acked, r.receiver.first_at)
        report.requests, report.attempts = len(r.acked) + len(r.unacked), r.attempts
        report.acknowledged, report.unacknowledged = len(r.acked), r.unacked
        report.statuses, report.faults = r.statuses, r.faults
        report.callbacks_duplicated = r.receiver.duplicates
        _latencies(report, r)
    finally:
        if side is not None:
            with contextlib.suppress(Exception):
                await side.aclose()
        await r.stop()
        report.elapsed_s = time.monotonic() - r.t0
        if tmp is not None:
            tmp.cleanup()
    return report


async def _quiesce(r: Run, side: Any, quiesce_s: float) -> bool:
    """Wait until everything acknowledged was acted on and every outbox message received."""
    end = time.monotonic() + quiesce_s
    probe = ChaosReport(seed=0, tables=0)
    while time.monotonic() < end:
        probe = ChaosReport(seed=0, tables=0)
        with contextlib.suppress(Exception):
            await account(probe, side, r.keys, r.acked, r.receiver.first_at)
            if not probe.lost and not probe.callbacks_missing and not probe.tables_unfinished:
                return True
        await asyncio.sleep(1.0)
    return False


def _latencies(report: ChaosReport, r: Run) -> None:
    """Two clocks, each to the first callback answering a request: from the platform's first attempt
    (so including the platform's own retry back-off while the store refused) and from the start of the
    attempt the service accepted (the service's own share: what a command it took waits to act)."""
    first_cb: dict[str, float] = {}
    for mid, at in r.receiver.first_at.items():
        cid = mid.split(":", 1)[0]
        first_cb[cid] = min(at, first_cb.get(cid, at))
    pairs = [(sent, first_cb[c] - sent) for c, sent in r.acked.items() if c in first_cb]
    taken = [(sent, first_cb[c] - sent) for c, sent in r.accepted.items() if c in first_cb]
    report.latency_s = percentiles([d for _, d in pairs])
    report.latency_from_accept_s = percentiles([d for _, d in taken])
    if r.restart_window is not None:
        lo, hi = r.restart_window
        report.latency_across_restart_s = percentiles([d for s, d in pairs if lo <= s <= hi])
        report.latency_from_accept_across_restart_s = percentiles([d for s, d in taken if lo <= s <= hi])
    # the slowest few, located in the run's timeline beside the faults, for whoever reads the report
    slow = sorted(((first_cb[c] - s, s, c) for c, s in r.accepted.items() if c in first_cb), reverse=True)[:5]
    report.slowest = [f"{c} accepted at {s - r.t0:.1f}s took {d:.2f}s" for d, s, c in slow]


if __name__ == "__main__":
    import argparse

    ap = argparse.ArgumentParser(description="A randomized fault run (issue 12); prints its report.")
    ap.add_argument("--tables", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--drive-s", type=float, default=60.0)
    args = ap.parse_args()
    print(asyncio.run(run(tables=args.tables, workers=args.workers, seed=args.seed, drive_s=args.drive_s))
          .summary())
