"""The web table in a real headless browser (Debian's chromium driven by Playwright), through the
whole pipeline: whole matches by clicking and by keyboard alone, a reconnect that misses nothing,
and refused links.  Marked ``e2e`` (``make test-e2e``; ``.ci/run`` installs chromium)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

from service.domain.identities import Player
from service.domain.inputs import Input
from service.domain.weblinks import issue_link, table_url
from tests.adapters.web import pages
from tests.adapters.web.support import CHROMIUM, Stack, hidden_cards

pytestmark = pytest.mark.e2e

ME = Player(platform="terminal", user="you", name="You")
SHOTS = os.environ.get("CINQ_WEB_SHOTS")  # a folder: save the README's screenshots there


def url(s: Stack, table: str, who: Player | None = ME) -> str:
    k = issue_link(b"web-test", table=table, expires=time.time() + 600,
                   platform=who.platform if who else None, user=who.user if who else None)
    return table_url(s.url, k)


@pytest.fixture
async def browser():
    assert Path(CHROMIUM).exists(), "chromium is not installed (apt-get install -y chromium)"
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        await b.close()


async def play_out(page, *, keyboard: bool = False, limit: int = 900, shot: str | None = None) -> int:
    """Presses what may be played (by roles and names: tests/adapters/web/pages.py) until the end
    screen shows; with ``keyboard``, by Tab and Enter alone; returns how many presses it took."""
    if not keyboard:
        async def turn(p, pressed):
            if shot and pressed == 6:
                await p.screenshot(path=shot)
        return await pages.play_out(page, limit=limit, on_turn=turn)
    pressed = 0
    while not await page.get_by_role("dialog").is_visible():
        assert pressed < limit, "the match did not end"
        cont = page.get_by_role("button", name=pages.CONTINUE)
        if await cont.count() and await cont.is_visible():
            await cont.focus()
            await page.keyboard.press("Enter")
            continue
        targets = await pages.playable(page) if not await page.evaluate("window.cinq.busy") else []
        if not targets:
            await page.wait_for_timeout(30)
            continue
        target = await targets[0].element_handle()
        for _ in range(60):  # Tab until the move has the focus, then Enter
            await page.keyboard.press("Tab")
            if await page.evaluate("(t) => document.activeElement === t", target):
                break
        else:
            raise AssertionError("no playable move reachable by Tab")
        await page.keyboard.press("Enter")
        pressed += 1
    return pressed


@pytest.mark.parametrize("game", ["cinquillo", "535"])
async def test_a_whole_match_against_ai_players_by_clicking(browser, game):
    async with Stack() as s:
        table = await s.play_ai(ME, game)
        page = await browser.new_page(viewport={"width": 900, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(url(s, table))
        await page.wait_for_selector("#hand .cardbtn")
        # Every card is a button with a spoken name; the legal ones raised, the others dimmed.
        labels = await page.locator("#hand .cardbtn").evaluate_all(
            "bs => bs.map(b => b.getAttribute('aria-label'))")
        assert labels and all(labels)
        if game == "cinquillo":
            assert all(" of " in label for label in labels), labels
        mid = f"{SHOTS}/web-{game}-table.png" if SHOTS else None
        pressed = await play_out(page, shot=mid)
        assert pressed > 0
        t = await s.table(table)
        assert t.status == "finished"
        assert t.seed in await page.inner_text("#over"), "the end screen does not show the seed"
        if SHOTS:
            await page.screenshot(path=f"{SHOTS}/web-{game}-end.png")
        assert not errors, errors


async def test_keyboard_only_play_to_the_end(browser):
    async with Stack() as s:
        table = await s.play_ai(ME, "cinquillo")
        page = await browser.new_page()
        await page.goto(url(s, table))
        await page.wait_for_selector("#hand .cardbtn")
        assert await play_out(page, keyboard=True) > 0
        assert (await s.table(table)).status == "finished"


async def test_a_reconnect_mid_match_resumes_with_nothing_missed(browser):
    from adapters.web.cli import WebAdapter
    from adapters.web.payload import page_message
    from tests.adapters.web.test_web_api import outbox_for

    async with Stack() as s:
        table = await s.play_ai(ME, "cinquillo")
        page = await browser.new_page()
        start = await s.web.watch.last_id(table)
        await page.goto(url(s, table))
        await page.wait_for_selector("#hand .cardbtn")
        # The server goes away; meanwhile my move is played elsewhere (the chat's button) and the AI
        # players answer; then the server comes back on the same port.
        port = s.web.port
        await s.web.close()
        await page.wait_for_selector("#conn:not([hidden])", timeout=20000)
        t = await s.until(lambda t: t.to_move() == t.seat_of(ME) or t.status != "running", table)
        now = await s.web.watch.now(table, ME, "en")
        hand = next(m for m in now or [] if m.kind == "hand")
        await s.rt.gateway.submit(Input(ME, _room()), token=hand.actions[0].token)
        await s.until(lambda t2, v=t.version: t2.version > v + 1 or t2.status != "running", table)
        s.web = WebAdapter(s.settings, s.web.ws, s.rt.gateway, s.rt.watch(block_ms=50))
        await s.web.start(host="127.0.0.1", port=port)
        # The page reconnects by itself (its feed sends Last-Event-ID) and logs every line it missed.
        await page.wait_for_selector("#conn[hidden]", state="attached", timeout=20000)
        await page.wait_for_timeout(800)
        logged = await page.inner_text("#log")
        missed = [m for mid, m in await outbox_for(s, table)
                  if tuple(map(int, mid.split("-"))) > tuple(map(int, start.split("-")))
                  and m.to.room is not None and m.kind == "table"]
        assert missed, "nothing happened while the page was away"
        for m in missed:
            for line in page_message(m.rendered("en"), ME, "en")["lines"]:
                assert line in logged, line


def _room():
    from service.domain.identities import Room
    return Room(platform=ME.platform, chat=ME.user, kind="private")


async def test_forged_and_expired_links_show_nothing(browser):
    async with Stack() as s:
        table = await s.play_ai(ME, "cinquillo")
        page = await browser.new_page()
        good = url(s, table)
        expired = table_url(s.url, issue_link(b"web-test", table=table, expires=time.time() - 1,
                                              platform="terminal", user="you"))
        responses: list[int] = []
        page.on("response", lambda r: responses.append(r.status) if "/api/" in r.url else None)
        for bad in (good[:-3] + "xyz", expired):
            responses.clear()
            await page.goto(bad)
            await page.wait_for_selector("body.refused")
            assert await page.locator("#hand .cardbtn").count() == 0
            assert 401 in responses
            t = await s.table(table)
            content = await page.content()
            assert not any(f">{c}<" in content for c in hidden_cards(t, None))
