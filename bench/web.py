"""The web table, measured in a real browser (Debian's chromium, Playwright) on loopback: the time
from a click to the updated table in the same browser and in another person's, the page's weight and
its first paint.  Run: ``.venv/bin/python bench/web.py [--moves N]`` (prints figures, asserts none).

``--redis-server`` runs it on a throw-away ``redis-server`` instead of fakeredis.  ``--processes`` runs
it as deployed: a throw-away ``redis-server``, ``cinq worker`` and ``cinq web`` each a process of its
own, this process only the browsers' driver (and the people's first commands, through a gateway of
its own).  In the default, in-process stack the service shares one event loop with fakeredis and the
driver (Playwright's protocol, every response's body read for the page's weight): a click then
waited for that loop before its POST was even read (issue 33's profile: 10-22 ms of a 50 ms click).

Two people share a group table with one AI player, each in a browser context of their own; every
click of one is timed until their own page shows the new version, and until the other's does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import aiohttp
from playwright.async_api import async_playwright
from redis.asyncio import Redis

from bench.capacity import start_redis
from service.domain.identities import Player, Room
from service.domain.inputs import Input
from service.domain.weblinks import issue_link, table_url
from service.foundation.settings import Settings
from service.ops.runtime import Runtime, build
from service.store import repository
from tests.adapters.web.support import CHROMIUM, Stack
from tools.loopback import free_port

ROOT = Path(__file__).resolve().parents[1]
CINQ = str(Path(sys.executable).with_name("cinq"))
# The roles' secrets in --processes (every role on Redis refuses weak ones).
TOKEN_SECRET = "bench-web-token-secret-not-for-production-0123"
DAILY_SECRET = "bench-web-daily-secret-not-for-production-0123"

GROUP = Room(platform="terminal", chat="group-1", kind="group")
PEOPLE = [Player(platform="terminal", user="ana", name="Ana"),
          Player(platform="terminal", user="bea", name="Bea")]
VERSION = "window.cinq.drawn"  # the version of the room the page last drew
# When the page first drew a version after ``v`` (a frame may draw two at once).
FIRST_SHOWN = ("(v) => Math.min(...Object.entries(window.cinq.shownAt).filter(([k]) => +k > v)"
               ".map(([, t]) => t))")


REFERENCE = """async (n) => { const out = [];
  for (let i = 0; i < n; i++) { const t0 = performance.now(); const r = await fetch('/healthz');
    await r.text(); out.push(performance.now() - t0); }
  return out; }"""


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, round(p / 100 * (len(xs) - 1)))]


class Processes:
    """The service as deployed (``--processes``): ``cinq worker`` and ``cinq web`` as processes on
    ``redis_url``; the same few members as :class:`Stack` that :func:`run` uses (a gateway of this
    process's own for the people's first commands, the table as stored, the page's address)."""

    def __init__(self, redis: Redis, redis_url: str) -> None:
        self.settings = Settings(redis_url=redis_url, token_secrets=[TOKEN_SECRET],
                                 daily_secret=DAILY_SECRET, turn_seconds=0, auto_pass_s=0)
        self.rt: Runtime = build(self.settings, redis=redis)  # its worker is not run: the process's is
        self.port = free_port()
        self.env = {**os.environ, "REDIS_URL": redis_url, "CINQ_TOKEN_SECRETS": f'["{TOKEN_SECRET}"]',
                    "CINQ_DAILY_SECRET": DAILY_SECRET, "CINQ_TURN_SECONDS": "0", "CINQ_AUTO_PASS_S": "0",
                    "CINQ_LOG_LEVEL": "WARNING", "CINQ_WEB_HOST": "127.0.0.1",
                    "CINQ_WEB_PORT": str(self.port)}
        self.procs: list[subprocess.Popen[bytes]] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def __aenter__(self) -> Processes:
        for role in ("worker", "web"):  # each with a metrics port of its own
            env = {**self.env, "CINQ_HTTP_PORT": str(free_port())}
            self.procs.append(subprocess.Popen([CINQ, role], cwd=ROOT, env=env))
        async with aiohttp.ClientSession() as http:
            for _ in range(600):
                with contextlib.suppress(aiohttp.ClientError):
                    async with http.get(f"{self.url}/healthz") as r:
                        if r.status == 200:
                            return self
                await asyncio.sleep(0.05)
        raise RuntimeError("cinq web did not come up")

    async def __aexit__(self, *exc: Any) -> None:
        for proc in self.procs:
            proc.terminate()
            proc.wait(30)

    async def table(self, table: str) -> Any:
        return await repository.load(self.rt.store, table)

    async def until(self, check: Any, table: str, timeout: float = 30.0) -> Any:
        deadline = time.monotonic() + timeout
        while not check(t := await self.table(table)):
            if time.monotonic() > deadline:
                raise AssertionError(f"table {table} never got there: {t and t.status}")
            await asyncio.sleep(0.05)
        return t


async def main(moves: int, real_redis: bool, processes: bool = False) -> None:
    proc, redis_url, redis = None, None, None
    if real_redis or processes:
        proc, redis_url = start_redis()
        redis = Redis.from_url(redis_url)
        for _ in range(100):  # until it answers
            with contextlib.suppress(Exception):
                await redis.ping()
                break
            await asyncio.sleep(0.05)
    try:
        await run(moves, redis, redis_url, processes)
    finally:
        if redis is not None:
            await redis.aclose()
        if proc is not None:
            proc.terminate()
            proc.wait()


async def run(moves: int, redis: Redis | None, redis_url: str | None, processes: bool = False) -> None:
    stack: Any = Processes(redis, redis_url) if processes and redis and redis_url else Stack(redis=redis)
    secret = stack.settings.secrets_bytes()[0]
    async with stack as s, async_playwright() as pw:
        gw = s.rt.gateway
        await gw.submit(Input(PEOPLE[0], GROUP, command_id="bench-new"), "/new cinquillo")
        table = gw.table_for("bench-new")
        await s.until(lambda t: t is not None, table)
        await gw.submit(Input(PEOPLE[1], GROUP), "/join")
        await gw.submit(Input(PEOPLE[0], GROUP), "/bots 1 easy")
        await asyncio.sleep(0.3)
        await gw.submit(Input(PEOPLE[0], GROUP), "/start")
        await s.until(lambda t: t.status == "running", table)
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        pages = []
        weight = paint = 0.0
        for i, who in enumerate(PEOPLE):
            ctx = await browser.new_context()
            page = await ctx.new_page()
            sizes: list[int] = []

            async def sized(r, sizes=sizes):
                if "/api/events" not in r.url:
                    with contextlib.suppress(Exception):
                        sizes.append(len(await r.body()))

            page.on("response", lambda r, f=sized: asyncio.ensure_future(f(r)))
            k = issue_link(secret, table=table, expires=time.time() + 3600, platform=who.platform,
                           user=who.user)
            await page.goto(table_url(s.url, k))
            await page.wait_for_selector("#felt .seat")
            await page.wait_for_timeout(300)
            if i == 0:
                weight = sum(sizes)
                paint = await page.evaluate(
                    "(performance.getEntriesByName('first-contentful-paint')[0]"
                    " || {startTime: -1}).startTime")
            pages.append(page)
        own: list[float] = []
        other: list[float] = []
        page_own: list[float] = []
        page_other: list[float] = []
        driver: list[float] = []
        while len(own) < moves:
            t = await s.table(table)
            if t.status != "running":
                break
            seat = t.to_move()
            who = next((i for i, p in enumerate(PEOPLE) if t.seat_of(p) == seat), None)
            if who is None:
                await asyncio.sleep(0.02)
                continue
            me, them = pages[who], pages[1 - who]
            legal = me.locator("#hand button.legal, #moves button.move[data-move], #moves button.pass")
            try:
                await legal.first.wait_for(timeout=5000)
            except Exception:
                continue
            v = await me.evaluate(VERSION)
            t0 = time.perf_counter()
            await legal.first.click()
            await me.wait_for_function(f"() => ({VERSION}) > {v}")  # a function: the CSP forbids eval
            own.append((time.perf_counter() - t0) * 1000)
            await them.wait_for_function(f"() => ({VERSION}) > {v}")
            other.append((time.perf_counter() - t0) * 1000)
            # The same, timed by the pages themselves (wall-clock ms, comparable between pages): from
            # the click handler to the table redrawn with the new version, without the driver's part.
            sent = await me.evaluate("cinq.sentAt")
            shown, seen = [await p.evaluate(FIRST_SHOWN, v) for p in (me, them)]
            if sent and shown and seen:
                page_own.append(shown - sent)
                page_other.append(seen - sent)
                driver.append(own[-1] - (shown - sent))
        # The reference, in the same run under the same load: a bare HTTP round trip from the page
        # to the same server (GET /healthz: no store, no worker), timed by the page.
        reference = await pages[0].evaluate(REFERENCE, len(own) or 20)
        await browser.close()
    store = "redis-server " + redis_url if redis_url else "fakeredis"
    roles = "cinq worker and cinq web as processes" if processes else "worker in-process"
    print(f"web table, {len(own)} clicks on loopback ({store}, {roles}, chromium headless)"
          f"; load average {os.getloadavg()[0]:.1f}")
    print("  timed by the driver (Playwright's click, its actionability checks and polling included):")
    for name, xs in (("own table updated:    ", own), ("other's table updated:", other)):
        print(f"  click -> {name} p50 {statistics.median(xs):6.1f} ms   p95 {pct(xs, 95):6.1f} ms"
              f"   p99 {pct(xs, 99):6.1f} ms")
    print(f"  timed in the pages (click handler -> table redrawn), {len(page_own)} clicks:")
    for name, xs in (("own table updated:    ", page_own), ("other's table updated:", page_other),
                     ("driver's own share:   ", driver)):
        if xs:
            print(f"  click -> {name} p50 {statistics.median(xs):6.1f} ms   p95 {pct(xs, 95):6.1f} ms"
                  f"   p99 {pct(xs, 99):6.1f} ms")
    print(f"  reference: page -> GET /healthz -> page   p50 {statistics.median(reference):6.1f} ms   p95 "
          f"{pct(reference, 95):6.1f} ms   ({len(reference)} round trips, same run)")
    if page_own:
        p50 = statistics.median(page_own) / max(statistics.median(reference), 0.01)
        p95 = pct(page_own, 95) / max(pct(reference, 95), 0.01)
        print(f"  ratio (click -> own table redrawn) / reference: p50 x{p50:.1f}   p95 x{p95:.1f}")
    print(f"  page weight (html, css, js, texts, state): {weight / 1024:.1f} KB (goal < 150 KB)")
    print(f"  first contentful paint: {paint:.0f} ms (goal < 1000 ms)")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--moves", type=int, default=40)
    ap.add_argument("--redis-server", action="store_true",
                    help="on a redis-server of its own (a free loopback port) instead of fakeredis")
    ap.add_argument("--processes", action="store_true",
                    help="cinq worker and cinq web as processes on a redis-server of its own, as deployed")
    args = ap.parse_args()
    asyncio.run(main(args.moves, args.redis_server, args.processes))
