"""The deal of the day in a real browser (Debian's chromium through Playwright): a person's page offers
"Daily Cinquillo", the attempt opens and is played to its end by clicking cards, the end screen holds
no seed, and the same button then shows the person's standing; a Mini App opened from the bot's menu
(no table) offers the same.  Nothing of the day's deal on any page (G-1, D-3, D-5).  Marked ``e2e``.

With ``CINQ_WEB_SHOTS=<dir>`` the test saves ``web-daily-*.png`` there."""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest
from playwright.async_api import async_playwright

import engine
from adapters.web.initdata import sign_init_data
from service.domain import daily
from service.domain.identities import Player
from service.domain.weblinks import issue_link, table_url
from tests.adapters.web.pages import SIZES, play_out
from tests.adapters.web.support import CHROMIUM, Stack

pytestmark = pytest.mark.e2e

ME = Player(platform="telegram", user="777", name="Ana")
BOT = "4242:WEB-TEST"
SHOTS = os.environ.get("CINQ_WEB_SHOTS")
DAILY = re.compile(r"Daily Cinquillo|Cinquillo del día")


@pytest.fixture
async def browser():
    assert Path(CHROMIUM).exists(), "chromium is not installed (apt-get install -y chromium)"
    async with async_playwright() as p:
        b = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        await b.close()


async def test_d5_the_daily_deal_played_in_the_browser_and_its_standing(browser):
    async with Stack(bot_token=BOT) as s:
        other = await s.play_ai(ME)
        k = issue_link(b"web-test", table=other, expires=time.time() + 600, platform="telegram", user="777")
        page = await browser.new_page(viewport=SIZES["phone"])
        errors: list[str] = []
        page.on("pageerror", lambda e: errors.append(str(e)))
        await page.goto(table_url(s.url, k) + "&lang=en")
        await page.get_by_role("button", name=DAILY).click()
        await page.wait_for_url(re.compile(r"/t\?k="))
        await page.wait_for_selector("#hand .cardbtn")
        table = daily.table_id(s.rt.gateway.secrets[0], ME, "cinquillo", daily.day_of(time.time()))
        pages: list[str] = []

        async def on_turn(p, pressed):
            pages.append(await p.content())
            if SHOTS and pressed == 3:
                await p.screenshot(path=f"{SHOTS}/web-daily-table.png")

        await play_out(page, on_turn=on_turn)
        t = await s.until(lambda now: now.status == "finished", table)
        end = await page.get_by_role("dialog").inner_text()
        assert "You won" in end or "You lost" in end
        pages.append(await page.content())
        if SHOTS:
            await page.screenshot(path=f"{SHOTS}/web-daily-end.png")
        await page.keyboard.press("Escape")
        await page.get_by_role("button", name=DAILY).click()
        await page.wait_for_function(
            "() => document.querySelector('#over-body').innerText.includes('rank 1 of 1')")
        standing = await page.get_by_role("dialog").inner_text()
        assert "The Cinquillo deal of the day" in standing and "cinq · daily Cinquillo" in standing
        pages.append(await page.content())
        if SHOTS:
            await page.screenshot(path=f"{SHOTS}/web-daily-standing.png")
        unplayed = {str(c) for seat in (1, 2, 3) for c in engine.view(t.engine, seat)["hand"]}
        seen = "\n".join(pages)
        assert t.seed not in seen
        assert not [c for c in unplayed if f'"{c}"' in seen or f"card-{c}" in seen]
        assert not errors, errors


async def test_d3_a_mini_app_opened_from_the_menu_offers_the_daily_deal(browser):
    async with Stack(bot_token=BOT) as s:
        user = json.dumps({"id": 778, "first_name": "Bea", "language_code": "es"})
        init = sign_init_data(BOT, {"auth_date": str(int(time.time())), "user": user})
        page = await browser.new_page(viewport=SIZES["phone"])
        await page.goto(f"{s.url}/#tgWebAppData={init.replace('&', '%26').replace('=', '%3D')}")
        await page.get_by_role("button", name=DAILY).click()
        await page.wait_for_url(re.compile(r"/t\?k="))
        await page.wait_for_selector("#hand .cardbtn")
        bea = Player(platform="telegram", user="778")
        table = daily.table_id(s.rt.gateway.secrets[0], bea, "cinquillo", daily.day_of(time.time()))
        assert (await s.until(lambda now: now is not None, table)).seats[0].player.same(bea)
