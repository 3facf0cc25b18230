"""A group table on Telegram played from two browsers and one chat (issue 16's group test, G-1).

Ana and Bea open the table as a Mini App from the group (Telegram's signed ``initData`` names them and
the table), each in a browser context of their own; Cal plays with the buttons of his private chat
(the fake Bot API).  Each sees only their own hand: every network response of each browser context
(``page.on("response")``, and every Server-Sent Event, recorded as the page receives it), each page's
DOM, and every Bot API call are scanned for the cards of the other two.  Marked ``e2e``."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any
from urllib.parse import quote

import orjson
import pytest
from playwright.async_api import async_playwright

from adapters.telegram.callbacks import TOKEN_RE
from adapters.web.cli import WebAdapter
from adapters.web.config import WebSettings
from adapters.web.initdata import sign_init_data
from service.domain.identities import Room
from service.domain.tokens import open_token
from service.ops.runtime import build
from service.platform.outbox import Message
from service.protocol.i18n import translate
from service.protocol.i18n.render import move_text, render_view
from tests.adapters.telegram.support import GROUP_ID, TOKEN, World, person, settings
from tests.adapters.web.support import CHROMIUM, hidden_cards
from tests.leaks import strings_in

pytestmark = pytest.mark.e2e

ANA, BEA, CAL = person(51, "Ana"), person(52, "Bea"), person(53, "Cal")
# Every Server-Sent Event the page receives, kept for the scan (the stream's body never ends, so
# page.on("response") cannot read it): the page reads its feed with fetch (the link in a header), so
# the feed's body is teed here and each event's data recorded.
RECORD_SSE = """(() => {
  const realFetch = window.fetch.bind(window);
  window.__sse = [];
  window.fetch = async (input, init) => {
    const r = await realFetch(input, init);
    const url = typeof input === "string" ? input : input.url;
    if (!url.includes("/api/events") || !r.body) return r;
    const [mine, page] = r.body.tee();
    (async () => {
      const reader = mine.pipeThrough(new TextDecoderStream()).getReader();
      let buf = "";
      for (;;) {
        const {value, done} = await reader.read();
        if (done) return;
        buf += value;
        const lines = buf.split("\\n");
        buf = lines.pop();
        for (const l of lines) if (l.startsWith("data: ")) window.__sse.push(l.slice(6).replace(/\\r$/, ""));
      }
    })();
    return new Response(page, {status: r.status, statusText: r.statusText, headers: r.headers});
  };
})();"""


def _names(code: str) -> list[str]:
    return [move_text("cinquillo", code, loc) for loc in ("en", "es")]


def _mini_app_url(base: str, who: Any, table: str) -> str:
    user = json.dumps({"id": who.id, "first_name": who.first_name, "language_code": "en"})
    init = sign_init_data(TOKEN, {"auth_date": str(int(time.time())), "user": user, "start_param": table,
                                  "query_id": f"q{who.id}"})
    theme = json.dumps({"bg_color": "#ffffff", "text_color": "#111111"})
    return (f"{base}/t#tgWebAppData={quote(init, safe='')}&tgWebAppVersion=7.0"
            f"&tgWebAppThemeParams={quote(theme)}")


async def _outbox(w: World) -> list[Message]:
    keys = w.workers[0].keys
    out = []
    for b in range(keys.buckets):
        for _, fields in await w.redis.xrange(keys.outbox(b)):
            out.append(Message.model_validate(orjson.loads(fields[b"m"])))
    return out


async def test_g1_two_browsers_and_a_telegram_chat_each_see_only_their_own_hand(fake_redis):
    async with World(fake_redis, service=settings(web_public_url="http://127.0.0.1")) as w:
        rt = build(w.settings, redis=fake_redis)
        web = WebAdapter(w.settings, WebSettings(bot_token=TOKEN), rt.gateway, rt.watch(block_ms=50))
        await web.start(host="127.0.0.1", port=0)
        try:
            await _play(w, web)
        finally:
            await web.close()


async def _play(w: World, web: WebAdapter) -> None:
    for p in (ANA, BEA, CAL):
        await w.say(p, "/start")
    await w.start_in_group(ANA, "/new cinquillo players=3", [BEA, CAL])
    table = await w.tg.gateway.table_of(Room(platform="telegram", chat=str(GROUP_ID), kind="group"))
    assert table is not None
    load = w.workers[0].store
    from service.store.repository import load as load_table

    t = await load_table(load, table)
    assert t.status == "running"
    seats = {p.id: t.seat_of(_player(p)) for p in (ANA, BEA, CAL)}
    assert None not in seats.values()
    async with async_playwright() as pw:
        browser = await pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        pages, seen = {}, {}
        for p in (ANA, BEA):
            ctx = await browser.new_context()
            await ctx.add_init_script(RECORD_SSE)
            page = await ctx.new_page()
            bodies: list[tuple[str, bytes]] = []
            pending: list[Any] = []

            async def keep(r: Any, bodies: list[tuple[str, bytes]] = bodies) -> None:
                if "/api/events" in r.url:
                    return  # a stream: recorded event by event in the page (RECORD_SSE)
                try:
                    bodies.append((r.url, await asyncio.wait_for(r.body(), 20)))
                except Exception as e:  # read as it arrives; one that cannot be read fails the scan
                    bodies.append((r.url, f"unreadable: {e}".encode()))

            page.on("response", lambda r, keep=keep, pending=pending:
                    pending.append(asyncio.ensure_future(keep(r))))
            await page.goto(_mini_app_url(web.base_url, p, table))
            await page.wait_for_selector("#hand .cardbtn")
            pages[p.id], seen[p.id] = page, (bodies, pending)
        # Play until someone is close to an empty hand: every card still in a hand then was hidden
        # from the others all along.
        for _ in range(200):
            t = await load_table(load, table)
            if t.status != "running" or min(_sizes(t)) <= 2:
                break
            mover = t.to_move()
            who = next(p for p in (ANA, BEA, CAL) if seats[p.id] == mover)
            if who.id in pages:
                legal = pages[who.id].locator("#hand button.legal, #moves button.pass")
                await legal.first.wait_for(timeout=20000)
                await legal.first.click()
            else:
                await w.quiet()
                found = w.move_buttons(CAL.id)
                assert found is not None, "Cal's turn, and no move button in his chat"
                shown, moves = found
                await w.press(CAL, shown, moves[0]["callback_data"])
            deadline = time.monotonic() + 20
            while (await load_table(load, table)).version == t.version:
                assert time.monotonic() < deadline, "the move was not played"
                await pages[ANA.id].wait_for_timeout(20)
        await w.quiet()
        t = await load_table(load, table)
        assert t.status == "running" and t.version > 10, "the match went on for a while"
        for p in (ANA, BEA):
            page = pages[p.id]
            await page.wait_for_function(f"() => window.cinq.drawn >= {t.version}", timeout=20000)
            bodies, pending = seen[p.id]
            for job in pending:
                await job
            sse = await page.evaluate("window.__sse")
            dom = await page.content()
            _scan(p.first_name, hidden_cards(t, seats[p.id]), bodies, sse, dom,
                  own=set(hidden_cards(t, None)) - set(hidden_cards(t, seats[p.id])))
        await browser.close()
    _scan_telegram(w, t, seats, await _outbox(w))


def _player(p: Any):
    from service.domain.identities import Player
    return Player(platform="telegram", user=str(p.id))


def _sizes(t: Any) -> list[int]:
    import engine
    return list(engine.view(t.engine, None)["hand_sizes"])


def _scan(who: str, hidden: set[str], bodies: list[tuple[str, bytes]], sse: list[str], dom: str,
          own: set[str]) -> None:
    assert hidden and own
    api = [(u, b) for u, b in bodies if "/api/" in u and "/api/i18n" not in u]
    unread = [u for u, b in bodies if b.startswith(b"unreadable")]
    assert not unread, f"responses {who}'s page got that the scan could not read: {unread}"
    assert any("/api/session" in u for u, _ in api) and any("/api/state" in u for u, _ in api)
    # The link goes in a header: no API address carries it (issue 32, 8).
    assert not [u for u, _ in api if "k=" in u.partition("?")[2]], "a link in an API address"
    assert sse, f"{who}'s page received no event"
    texts = [b.decode() for _, b in api] + sse
    for raw in texts:
        strings = strings_in(json.loads(raw)) if raw.startswith(("{", "[")) else [raw]
        for s in strings:
            assert s not in hidden, f"{who} was sent another person's card {s}"
            for code in hidden:
                for name in _names(code):
                    assert name not in s, f"{who} was sent {name!r} (another person's card)"
    for code in hidden:
        assert f'"{code}"' not in dom, f"{who}'s page shows another person's card {code}"
        for name in _names(code):
            assert name not in dom, f"{who}'s page names another person's card {name!r}"
    # The scan can find a card: the page does show its own hand.
    assert any(f'data-card="{code}"' in dom for code in own), f"{who}'s page shows no hand of theirs"


def _scan_telegram(w: World, t: Any, seats: dict[int, int], outbox: list[Message]) -> None:
    """Every Bot API call: the only private lines (a hand, the legal moves) in a person's chat are
    their own; every move button there is a token for their seat; the group gets no private line."""
    allowed: dict[int, set[str]] = {}
    for m in outbox:
        if m.kind == "hand" and m.to.player is not None:
            lines = render_view(m.view or {}, "en").splitlines()
            allowed.setdefault(int(m.to.player.user), set()).update(lines)
    assert set(allowed) == set(seats), "each person got their hand in their private chat too"
    prefixes = [translate("en", key, cards="", moves="").strip() for key in ("view.hand", "view.legal")]
    shown = ("sendMessage", "editMessageText", "editMessageReplyMarkup", "answerCallbackQuery")
    calls = [c for c in w.fake.calls if c.method in shown]
    assert any(c.chat == CAL.id for c in calls) and any(c.chat == GROUP_ID for c in calls)
    for c in calls:
        lines = str(c.params.get("text") or "").splitlines()
        private = [line for line in lines if any(line.startswith(p) for p in prefixes)]
        if c.chat in seats:
            assert all(line in allowed[c.chat] for line in private), f"{c.chat} was sent a hand not theirs"
        else:
            assert not private, f"a private line went to chat {c.chat}: {private}"
        hidden = hidden_cards(t, seats.get(c.chat or 0))
        for row in (c.params.get("reply_markup") or {}).get("inline_keyboard", []):
            for b in row:
                data = b.get("callback_data") or ""
                if TOKEN_RE.match(data):
                    claims = open_token([b"tg-test"], data)
                    assert c.chat in seats and claims.seat == seats[c.chat], "a move button for another seat"
                assert b.get("text") not in {n for code in hidden for n in _names(code)}
