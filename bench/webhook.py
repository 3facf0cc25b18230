"""The HTTP webhook adapter on a real Redis: inbound throughput and end-to-end latency, over loopback.

usage: bench/webhook.py REDIS_URL [--requests 20000] [--concurrency 64] [--tables 20] [--seconds 30]
                          [--think 1.0]

A match that waits more than 30 s for an answer is given up and said so (a move's latency counted at
30 s): a stalled command shows in the figures instead of ending the run.

The adapter and the worker run as the real commands (``python -m adapters.webhook``, ``cinq worker``),
each in a process of its own; this process is the chat platform (the load generator and the callback
receiver, which checks every signature).

1. Inbound: ``--requests`` signed ``/help`` events from many users, ``--concurrency`` at a time, to
   an HTTP-only adapter process (``CINQ_WEBHOOK_DELIVER=false``); reports the requests per second
   answered 202 (each one verified, parsed, deduplicated, rate-limited and handed to the gateway).
2. End to end: ``--tables`` two-person Cinquillo matches played at once by pressing buttons, through
   an adapter process that also delivers and a worker process; a move's latency is from sending the
   signed action to receiving the first signed callback that shows its result.  Reports p50 and p99
   for one table alone (each move sent as soon as the turn comes: the latency without queueing),
   then for ``--tables`` at once whose people answer their turn after ``--think`` x U(0.5, 1.5)
   seconds, as people do (issue 33's goal: 20 tables, p50 <= 20 ms, p99 <= 100 ms).  ``--think 0``
   plays them as fast as the service answers: a throughput test, whose latency is the queue.

This process plays an outside integrator: it signs its events and verifies every callback with the
official Standard Webhooks library (``standardwebhooks`` on PyPI), not with the adapter's own code.

Only keys under the prefix ``bench:wh:`` are touched (deleted before and after).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import aiohttp  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
from aiohttp import web  # noqa: E402
from standardwebhooks.webhooks import Webhook, WebhookVerificationError  # noqa: E402

from bench.pipeline import clean  # noqa: E402
from tools.loopback import free_port  # noqa: E402

# every role on Redis refuses to start without a strong daily secret (CINQ_DAILY_SECRET)
DAILY_SECRET = "bench-daily-secret-not-for-production-0123"
TOKEN_SECRETS = '["bench-webhook-token-secret-not-for-production-0123"]'

PREFIX = "bench:wh:"
SECRET = "whsec_" + "YmVuY2gtc2VjcmV0LWJlbmNoLXNlY3JldA=="
PLATFORM = "bench"
# The integrator's side of the signatures: the official library, one secret both ways.
HOOK = Webhook(SECRET)
REMATCH_MARK = "🔁"  # the end's "Play again" button (English texts)
# A move whose result has not come back after this long is lost: counted at this latency, and its table
# starts a new match (before, one such move ended the whole run with a TimeoutError).
LOST_S = 30.0


def _env(redis_url: str, port: int, callback: str, deliver: bool) -> dict[str, str]:
    return {**os.environ, "CINQ_DAILY_SECRET": DAILY_SECRET,
            "CINQ_TOKEN_SECRETS": TOKEN_SECRETS,
            "REDIS_URL": redis_url, "CINQ_KEY_PREFIX": PREFIX, "CINQ_TURN_SECONDS": "0",
            "CINQ_LOG_LEVEL": "WARNING", "CINQ_HTTP_PORT": "0",  # operations listener: any free port
            "CINQ_WEBHOOK_PORT": str(port), "CINQ_WEBHOOK_DELIVER": "true" if deliver else "false",
            "CINQ_WEBHOOK_RATE": "1000000", "CINQ_WEBHOOK_BURST": "1000000",
            "CINQ_WEBHOOK_PLATFORMS": json.dumps([{"name": PLATFORM, "secrets": [SECRET],
                                                   "callback_url": callback}])}


async def _wait_ready(session: aiohttp.ClientSession, url: str) -> None:
    for _ in range(200):
        try:
            async with session.get(url) as r:
                if r.status == 200:
                    return
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.05)
    raise RuntimeError(f"{url} did not come up")


_ids = itertools.count()


def _signed(payload: dict[str, Any]) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(payload).encode()
    msg_id, now = f"b{next(_ids)}-{time.monotonic_ns()}", datetime.now(UTC)
    return body, {"webhook-id": msg_id, "webhook-timestamp": str(int(now.timestamp())),
                  "webhook-signature": HOOK.sign(msg_id, now, body), "content-type": "application/json"}


def _event(user: str, chat: str, kind: str, text: str | None = None,
           token: str | None = None) -> dict[str, Any]:
    base = {"chat": {"id": chat, "kind": kind}, "user": {"id": user, "name": user, "locale": "en"}}
    return {"type": "action", **base, "token": token} if token else {"type": "message", **base, "text": text}


def _cpu_s(pid: int) -> float:
    """CPU seconds (user + system) used so far by a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def _redis_cpu_s(r: Any) -> float:
    info = await r.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def inbound(url: str, n: int, concurrency: int, pid: int, r: Any) -> tuple[float, float, float]:
    """Requests per second answered 202 by one adapter process, and the CPU milliseconds per request
    that the adapter process and Redis spent (figures that do not depend on what else the machine runs)."""
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=concurrency)) as s:
        await _wait_ready(s, f"{url}/healthz")
        queue = iter(range(n))
        statuses: dict[int, int] = {}

        async def client() -> None:
            for i in queue:
                body, hdrs = _signed(_event(f"user{i % 500}", f"chat{i % 500}", "group", text="/help"))
                async with s.post(f"{url}/v1/platforms/{PLATFORM}/events", data=body, headers=hdrs) as r:
                    await r.read()
                    statuses[r.status] = statuses.get(r.status, 0) + 1

        # Warm up (connections, caches), then time.
        warm = iter(range(min(500, n)))
        queue, saved = warm, queue
        await asyncio.gather(*(client() for _ in range(concurrency)))
        queue, statuses = saved, {}
        cpu0, rcpu0 = _cpu_s(pid), await _redis_cpu_s(r)
        t0 = time.perf_counter()
        await asyncio.gather(*(client() for _ in range(concurrency)))
        took = time.perf_counter() - t0
        cpu, rcpu = _cpu_s(pid) - cpu0, await _redis_cpu_s(r) - rcpu0
    if set(statuses) != {202}:
        raise RuntimeError(f"unexpected answers: {statuses}")
    return n / took, cpu / n * 1000, rcpu / n * 1000


class Receiver:
    """The platform's callback endpoint: verifies signatures and wakes the table each message is for."""

    def __init__(self) -> None:
        self.inbox: dict[str, asyncio.Queue[tuple[float, dict[str, Any]]]] = {}
        self.bad = 0
        self.count = 0
        self.lost: list[str] = []  # matches given up: an answer did not come within LOST_S (see play)

    def queue(self, key: str) -> asyncio.Queue[tuple[float, dict[str, Any]]]:
        return self.inbox.setdefault(key, asyncio.Queue())

    async def callback(self, request: web.Request) -> web.Response:
        body = await request.read()
        now = time.perf_counter()
        try:
            msg = HOOK.verify(body, dict(request.headers))
        except WebhookVerificationError:
            self.bad += 1
            return web.Response(status=401)
        to = msg["to"]
        who = to["chat"]["id"] if "chat" in to else to["user"]["id"]
        self.count += 1
        self.queue(who.split("-")[0]).put_nowait((now, msg))
        return web.Response(status=200)


async def play(url: str, s: aiohttp.ClientSession, rx: Receiver, name: str, deadline: float,
               latencies: list[float], think: float = 0.0) -> int:
    """Play matches until ``deadline`` (each in a group and with people of its own, so that late
    messages of one match are never taken for the next one's); returns the moves made.  A match that
    waits more than LOST_S for an answer is given up (noted in ``rx.lost``; a move's at LOST_S)."""
    lost = rx.lost
    rng = random.Random(name)
    moves = 0
    q: asyncio.Queue[tuple[float, dict[str, Any]]] = asyncio.Queue()
    group = ""

    async def send(payload: dict[str, Any]) -> None:
        body, hdrs = _signed(payload)
        async with s.post(f"{url}/v1/platforms/{PLATFORM}/events", data=body, headers=hdrs) as r:
            await r.read()
            assert r.status == 202, r.status

    async def said(who: str, text: str) -> None:
        # The gateway finds a room's table through an index the worker writes just after the table's
        # messages: a /join sent on the "created" message may find no table yet, and is sent again.
        for _ in range(50):
            await send(_event(who, group, "group", text=text))
            _, answer = await asyncio.wait_for(q.get(), LOST_S)
            if answer["kind"] == "table":
                return
            await asyncio.sleep(0.02)
        raise RuntimeError(f"{text} was never taken: {answer['text']!r}")

    for match in itertools.count():
        if time.perf_counter() >= deadline:
            break
        key = f"{name}m{match}"
        q, group, a, b = rx.queue(key), f"{key}-g", f"{key}-a", f"{key}-b"
        try:
            await said(a, "/new cinquillo")
            await said(b, "/join")
            await send(_event(a, group, "group", text="/start"))
        except TimeoutError:
            lost.append(f"{key}: no answer to a command")
            continue
        over = False
        while not over and time.perf_counter() < deadline:
            try:
                _, msg = await asyncio.wait_for(q.get(), LOST_S)
            except TimeoutError:
                lost.append(f"{key}: no hand")
                break
            if msg["kind"] == "match_over":
                over = True
            # The end's hands offer only "Play again" (a rematch: not a move of this match).
            if msg["kind"] != "hand" or not msg["buttons"] or all(
                    b["label"].startswith(REMATCH_MARK) for b in msg["buttons"]):
                continue
            version, user = msg["version"], msg["to"]["user"]["id"]
            if think:  # a person looks at their hand before pressing
                await asyncio.sleep(think * rng.uniform(0.5, 1.5))
            t0 = time.perf_counter()
            await send(_event(user, f"{user}-dm", "private", token=rng.choice(msg["buttons"])["token"]))
            moves += 1
            # The first callback showing the move's result (a later version of the table).
            while True:
                try:
                    at, nxt = await asyncio.wait_for(q.get(), LOST_S)
                except TimeoutError:
                    latencies.append(LOST_S)
                    lost.append(f"{key}: a move's result")
                    over = True
                    break
                over = over or nxt["kind"] == "match_over"
                if nxt["version"] > version:
                    latencies.append(at - t0)
                    q.put_nowait((at, nxt))  # still to be read by the loop above
                    break
    return moves


async def end_to_end(url: str, tables: int, seconds: float, rx: Receiver,
                     think: float = 0.0) -> tuple[list[float], int, list[float]]:
    """The moves' latencies, the moves made, and the reference of the same run: the same adapter's
    ``GET /healthz`` from this process every 0.1 s meanwhile (a loopback HTTP round trip through the
    adapter's event loop, no Redis: what the machine's load alone costs a request)."""
    latencies: list[float] = []
    reference: list[float] = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=256)) as s:
        await _wait_ready(s, f"{url}/healthz")
        deadline = time.perf_counter() + seconds

        async def ping() -> None:
            while time.perf_counter() < deadline:
                t0 = time.perf_counter()
                async with s.get(f"{url}/healthz") as r:
                    await r.read()
                reference.append(time.perf_counter() - t0)
                await asyncio.sleep(0.1)

        # Fresh group names per run: a match cut short by the deadline still runs in its group.
        run = next(_ids)
        moves = await asyncio.gather(*(play(url, s, rx, f"r{run}x{i}", deadline, latencies, think)
                                       for i in range(tables)), ping())
    return latencies, sum(moves[:-1]), reference


def _pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] * 1000


async def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("redis_url")
    ap.add_argument("--requests", type=int, default=20000)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--tables", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--think", type=float, default=1.0,
                    help="the people's mean time to answer their turn at the tables played at once (s)")
    args = ap.parse_args(argv)
    r = aioredis.from_url(args.redis_url)
    await clean(r, PREFIX)
    py = sys.executable
    procs: list[subprocess.Popen[bytes]] = []
    try:
        # 1. Inbound throughput: one HTTP-only adapter process.
        port = free_port()
        procs.append(subprocess.Popen([py, "-m", "adapters.webhook"], cwd=ROOT,
                                      env=_env(args.redis_url, port, "http://127.0.0.1:9/", deliver=False)))
        rps, cpu_ms, redis_ms = await inbound(f"http://127.0.0.1:{port}", args.requests, args.concurrency,
                                              procs[0].pid, r)
        print(f"inbound: {rps:,.0f} requests/s accepted (202) by one adapter process "
              f"({args.requests} signed events, {args.concurrency} concurrent); CPU per request: "
              f"adapter {cpu_ms:.2f} ms (= {1000 / cpu_ms:,.0f}/s on one free core), Redis {redis_ms:.3f} ms")
        print(f"  load average while measuring: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
        for p in procs:
            p.terminate()
            p.wait(10)
        procs.clear()
        await clean(r, PREFIX)

        # 2. End to end: an adapter (HTTP + delivery) and a worker, each a process; this one is the platform.
        rx = Receiver()
        app = web.Application()
        app.router.add_post("/cb", rx.callback)
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        cb_port = free_port()
        await web.TCPSite(runner, "127.0.0.1", cb_port).start()
        port = free_port()
        env = _env(args.redis_url, port, f"http://127.0.0.1:{cb_port}/cb", deliver=True)
        procs.append(subprocess.Popen([py, "-m", "adapters.webhook"], cwd=ROOT, env=env))
        worker = "import sys; from service.ops.cli import main; sys.exit(main(['worker']))"
        procs.append(subprocess.Popen([py, "-c", worker], cwd=ROOT, env=env))
        url = f"http://127.0.0.1:{port}"
        # Warm up unmeasured (the worker's start, first connections, schemas built on first use): else
        # the first run's CPU per move counts the processes' start-up.
        await end_to_end(url, 1, 3.0, rx)
        rx.lost.clear()
        runs = ((1, min(10.0, args.seconds), 0.0), (args.tables, args.seconds, args.think))
        for tables, seconds, think in runs:
            cpu0 = [_cpu_s(p.pid) for p in procs] + [await _redis_cpu_s(r)]
            lat, moves, ref = await end_to_end(url, tables, seconds, rx, think)
            cpu = [_cpu_s(p.pid) for p in procs] + [await _redis_cpu_s(r)]
            per = [(c1 - c0) / max(moves, 1) * 1000 for c0, c1 in zip(cpu0, cpu, strict=True)]
            pace = f"people answering in {think:g} s x U(0.5, 1.5)" if think else "each move sent at once"
            print(f"end to end, {tables} table(s) at once ({pace}): {moves} moves in {seconds:g} s; "
                  f"move -> signed callback p50 {_pct(lat, 0.5):.1f} ms, p99 {_pct(lat, 0.99):.1f} ms, "
                  f"mean {statistics.mean(lat) * 1000:.1f} ms; load average {os.getloadavg()[0]:.1f}")
            print(f"  CPU per move: adapter {per[0]:.2f} ms, worker {per[1]:.2f} ms, Redis {per[2]:.2f} ms")
            if rx.lost:
                print(f"  given up, no answer within {LOST_S:g} s: {len(rx.lost)} ({'; '.join(rx.lost[:5])})")
                rx.lost.clear()
            print(f"  reference, same run: GET /healthz of the adapter p50 {_pct(ref, 0.5):.1f} ms, "
                  f"p99 {_pct(ref, 0.99):.1f} ms ({len(ref)} requests); ratio move / reference p50 "
                  f"x{_pct(lat, 0.5) / max(_pct(ref, 0.5), 1e-3):.1f}")
        print(f"callbacks received: {rx.count}, bad signatures: {rx.bad}")
        await runner.cleanup()
    finally:
        for p in procs:
            p.terminate()
            p.wait(10)
        await clean(r, PREFIX)
        await r.aclose()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
