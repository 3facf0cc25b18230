"""Driving the web table as a person (or a screen reader) would: by roles and names, never by the
page's own markup.  Shared by the browser suites and ``bench/web.py``."""

from __future__ import annotations

import re
from typing import Any

from playwright.async_api import Error as PlaywrightError

# The words of the page's buttons in both languages (web.po): what a person reads on them.
PLAY = re.compile(r"^(Play|Jugar) ")
PASS = re.compile(r"^(Pass|Paso)$")
CONTINUE = re.compile(r"^(Continue|Seguir)$")
SIZES = {"desktop": {"width": 1280, "height": 900}, "phone": {"width": 390, "height": 844}}


async def hand_buttons(page: Any) -> Any:
    """The hand's cards: buttons in the group named after the hand's heading."""
    return page.get_by_role("group", name=re.compile(r"^(Your hand|Tu mano)$")).get_by_role("button")


async def playable(page: Any) -> list[Any]:
    """What the player may press now, in the order a person would look: a 535 Play button that the
    chosen cards make, a card that can be played (or chosen), else Pass."""
    play = page.get_by_role("button", name=PLAY)
    if await play.count():
        return [play.first]
    cards = await hand_buttons(page)
    # Read at once (the hand is redrawn as messages come): neither dimmed nor already chosen.
    states = await cards.evaluate_all("bs => bs.map(b => b.getAttribute('aria-disabled') !== 'true'"
                                      " && b.getAttribute('aria-pressed') !== 'true')")
    found = [cards.nth(i) for i, ok in enumerate(states) if ok]
    if found:
        return found
    passing = page.get_by_role("button", name=PASS)
    return [passing.first] if await passing.count() else []


async def press_one(page: Any, *, polls: int = 2000) -> None:
    """Presses one playable thing, first waiting while the AI players move: right after a press
    the page is idle but it may be another seat's turn, so nothing is playable yet."""
    for _ in range(polls):
        if not await page.evaluate("window.cinq.busy"):
            targets = await playable(page)
            if targets:
                try:
                    await targets[0].click(timeout=3000)
                except PlaywrightError:  # redrawn under the finger (a message came): look again
                    continue
                await page.wait_for_function("() => !window.cinq.busy")
                return
        await page.wait_for_timeout(30)
    raise AssertionError("nothing became playable")


async def play_out(page: Any, *, limit: int = 900, on_round: Any = None, on_turn: Any = None) -> int:
    """Presses playable things until the end screen shows (a round's result is read, then
    Continue); returns how many presses it took."""
    pressed = 0
    over = page.get_by_role("dialog")
    while not await over.is_visible():
        assert pressed < limit, "the match did not end"
        cont = page.get_by_role("button", name=CONTINUE)
        if await cont.count() and await cont.is_visible():
            if on_round is not None:
                await on_round(page)
            await cont.click()
            continue
        if await page.evaluate("window.cinq.busy"):
            await page.wait_for_timeout(20)
            continue
        targets = await playable(page)
        if not targets:
            await page.wait_for_timeout(30)
            continue
        if on_turn is not None:
            await on_turn(page, pressed)
        try:
            await targets[0].click(timeout=3000)
        except PlaywrightError:  # redrawn under the finger (a message came): look again
            continue
        pressed += 1
    return pressed
