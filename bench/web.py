"""The web table, measured in a real browser (Debian's chromium, Playwright) on loopback: the time
from a click to the updated table in the same browser and in another person's, the page's weight and
its first paint.  Run: ``.venv/bin/python bench/web.py [--moves N]`` (prints figures, asserts none).

``--redis-server`` runs it on a throw-away ``redis-server`` instead of fakeredis.

Two people share a group table with one AI player, each in a browser context of their own; every
click of one is timed until their own page shows the new version, and until the other's does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.async_api import async_playwright
from redis.asyncio import Redis

from bench.capacity import start_redis
from service.domain.identities import Player, Room
from service.domain.weblinks import issue_link, table_url
from tests.adapters.web.support import CHROMIUM, Stack

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


async def main(moves: int, real_redis: bool) -> None:
    proc, redis_url, redis = None, None, None
    if real_redis:
        proc, redis_url = start_redis()
        redis = Redis.from_url(redis_url)
        for _ in range(100):  # until it answers
            with contextlib.suppress(Exception):
                await redis.ping()
                break
            await asyncio.sleep(0.05)
    try:
        await run(moves, redis, redis_url)
    finally:
        if redis is not None:
            await redis.aclose()
        if proc is not None:
            proc.terminate()
            proc.wait()


async def run(moves: int, redis: Redis | None, redis_url: str | None) -> None:
    async with Stack(redis=redis) as s, async_playwright() as pw:
        gw = s.rt.gateway
        await gw.submit("/new cinquillo", user=PEOPLE[0], room=GROUP, command_id="bench-new")
        table = gw.table_for("bench-new")
        await s.until(lambda t: t is not None, table)
        await gw.submit("/join", user=PEOPLE[1], room=GROUP)
        await gw.submit("/bots 1 easy", user=PEOPLE[0], room=GROUP)
        await asyncio.sleep(0.3)
        await gw.submit("/start", user=PEOPLE[0], room=GROUP)
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
            k = issue_link(b"web-test", table=table, expires=time.time() + 3600, platform=who.platform,
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
            await me.wait_for_function(f"({VERSION}) > {v}")
            own.append((time.perf_counter() - t0) * 1000)
            await them.wait_for_function(f"({VERSION}) > {v}")
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
    print(f"web table, {len(own)} clicks on loopback ({store}, worker in-process, chromium headless)")
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
    args = ap.parse_args()
    asyncio.run(main(args.moves, args.redis_server))
