"""``cinq play --web`` without an AI level: the page offers the level before the deal (issue 34, 12).

``POST /api/new`` is refused without this process's start key (none, another, the key in the query
instead of the header: 401), with a level that is not one or a body that is not JSON (400), in the
page's language, and deals nothing then; two presses at once and a replayed request deal one match.
With a level in the words, ``cinq play --web`` deals at once and serves no ``/new``."""

from __future__ import annotations

import asyncio
import contextlib
import io
import os
import time
from urllib.parse import parse_qs, urlparse

import aiohttp
import fakeredis
import pytest
from aiohttp import web

from adapters.web import cli
from adapters.web.app import STATIC
from adapters.web.local import add_level_choice
from service.domain.weblinks import open_link
from service.ops.runtime import build
from service.store import repository
from tests.adapters.web.support import settings

KEY = "start-key-of-this-process"


class _Deals:
    """A fake of the process's deal (the real one submits /play): records each level it was asked."""

    def __init__(self) -> None:
        self.levels: list[str] = []

    async def __call__(self, level: str) -> str:
        self.levels.append(level)
        await asyncio.sleep(0.05)  # a deal takes a moment: a second press comes meanwhile
        return f"link-{len(self.levels)}"


@contextlib.asynccontextmanager
async def _server(deals: _Deals):
    app = web.Application()
    add_level_choice(app, key=KEY, deal=deals, index=STATIC / "index.html")
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    try:
        async with aiohttp.ClientSession(f"http://127.0.0.1:{port}") as http:
            yield http
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("headers,body,status,lang,said", [
    ({}, {"level": "hard"}, 401, "en", "link"),
    ({"Authorization": "Start another-key"}, {"level": "hard"}, 401, "es", "enlace"),
    ({"Authorization": f"Link {KEY}"}, {"level": "hard"}, 401, "en", "link"),
    ({"Authorization": f"Start {KEY}"}, {"level": "impossible"}, 400, "es", ""),
    ({"Authorization": f"Start {KEY}"}, {"level": ["hard"]}, 400, "en", ""),
    ({"Authorization": f"Start {KEY}"}, "not json", 400, "en", ""),
])
async def test_a_deal_without_the_start_key_or_a_level_is_refused(headers, body, status, lang, said):
    deals = _Deals()
    async with _server(deals) as http:
        data = {"data": body} if isinstance(body, str) else {"json": body}
        r = await http.post(f"/api/new?lang={lang}", headers=headers, **data)
        assert r.status == status
        problem = await r.json(content_type=None)
        assert problem["status"] == status and said in problem["detail"].lower()
        # The key given in the address instead of the header is no key either.
        r = await http.post(f"/api/new?s={KEY}", json={"level": "hard"})
        assert r.status == 401
    assert deals.levels == []


async def test_two_presses_at_once_and_a_replay_deal_one_match():
    deals = _Deals()
    async with _server(deals) as http:
        auth = {"Authorization": f"Start {KEY}"}
        first, second = await asyncio.gather(http.post("/api/new", headers=auth, json={"level": "hard"}),
                                             http.post("/api/new", headers=auth, json={"level": "easy"}))
        links = {(await first.json())["k"], (await second.json())["k"]}
        again = await http.post("/api/new", headers=auth, json={"level": "easy"})
        links.add((await again.json())["k"])
        assert (await http.get("/new")).status == 200
    assert len(deals.levels) == 1 and links == {"link-1"}


async def _play_web(words: list[str], lang: str, rt=None):
    """``cinq play --web`` in-process (no browser opened): its task and the address it printed."""
    out = io.StringIO()
    task = asyncio.create_task(cli._play(words, lang, 0, False, out, runtime=rt))
    for _ in range(400):
        if out.getvalue().strip():
            return task, out.getvalue().strip()
        await asyncio.sleep(0.05)
    task.cancel()
    raise AssertionError("cinq play --web printed no address")


async def _stop(task: asyncio.Task) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


async def test_cinq_play_web_deals_at_once_when_the_words_name_a_level():
    task, url = await _play_web(["535", "hard"], "en")
    try:
        assert urlparse(url).path == "/t" and parse_qs(urlparse(url).query)["k"]
        base = f"{urlparse(url).scheme}://{urlparse(url).netloc}"
        async with aiohttp.ClientSession(base) as http:
            assert (await http.get("/new")).status == 404
            assert (await http.post("/api/new", json={"level": "easy"})).status in (404, 405)
    finally:
        await _stop(task)


async def test_cinq_play_web_without_a_level_prints_the_choice_and_deals_the_chosen_one():
    rt = build(settings(), redis=fakeredis.FakeAsyncRedis())
    task, url = await _play_web(["cinquillo", "players=3"], "es", rt)
    try:
        parts = urlparse(url)
        q = parse_qs(parts.query)
        assert parts.path == "/new" and q["game"] == ["cinquillo"] and q["lang"] == ["es"]
        async with aiohttp.ClientSession(f"{parts.scheme}://{parts.netloc}") as http:
            refused = await http.post("/api/new?lang=es", json={"level": "hard"})
            assert refused.status == 401 and "enlace" in (await refused.json(content_type=None))["detail"]
            page = await http.get(f"/new?{parts.query}")
            assert page.status == 200 and "table.js" in await page.text()
            r = await http.post("/api/new", headers={"Authorization": f"Start {q['s'][0]}"},
                                json={"level": "hard"})
            k = (await r.json())["k"]
            table = open_link(rt.gateway.secrets, k, time.time()).table
            t = await repository.load(rt.worker.store, table)
            assert t.game == "cinquillo" and [s.bot for s in t.seats[1:]] == ["hard"] * 2
            state = await (await http.get(f"/api/state?k={k}")).json()
            assert state["table"] == table and not state["spectator"]
    finally:
        await _stop(task)


@pytest.fixture
async def browser():
    from playwright.async_api import async_playwright

    from tests.adapters.web.support import CHROMIUM
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        await b.close()


@pytest.mark.e2e
@pytest.mark.parametrize("size,lang,game", [("phone", "es", "535"), ("desktop", "en", "cinquillo")])
async def test_the_page_offers_the_level_before_the_deal(browser, size, lang, game):
    from tests.adapters.web.pages import SIZES, hand_buttons
    words = {"es": ("Nivel de la IA", "Medio", "Difícil", "Repartir"),
             "en": ("AI level", "Medium", "Hard", "Deal")}
    heading, medium, hard, deal = words[lang]
    rt = build(settings(), redis=fakeredis.FakeAsyncRedis())
    task, url = await _play_web([game], lang, rt)
    page = await browser.new_page(viewport=SIZES[size])
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        await page.goto(url)
        levels = page.get_by_role("group", name=heading)
        await levels.wait_for()
        # Three levels by name, medium chosen (as /play without one); a choice moves the pressed one.
        assert await levels.get_by_role("button").count() == 3
        assert await levels.get_by_role("button", name=medium).get_attribute("aria-pressed") == "true"
        await levels.get_by_role("button", name=hard).click()
        assert await levels.get_by_role("button", name=hard).get_attribute("aria-pressed") == "true"
        assert await levels.get_by_role("button", name=medium).get_attribute("aria-pressed") == "false"
        for i in range(3):
            box = await levels.get_by_role("button").nth(i).bounding_box()
            assert box and box["height"] >= 44 and box["x"] + box["width"] <= SIZES[size]["width"]
        if os.environ.get("CINQ_WEB_SHOTS"):
            await page.screenshot(path=f"{os.environ['CINQ_WEB_SHOTS']}/web-level-{size}.png")
        await page.get_by_role("button", name=deal).click()
        await (await hand_buttons(page)).first.wait_for()
        assert await page.evaluate("document.documentElement.scrollWidth") <= SIZES[size]["width"]
        table = await page.evaluate("window.cinq.table")
        t = await repository.load(rt.worker.store, table)
        assert t.game == game and t.seats[1].bot == "hard"
        assert not errors, errors
    finally:
        await page.close()
        await _stop(task)
