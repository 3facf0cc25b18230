"""The web table's buttons on Telegram (CINQ_WEB_PUBLIC_URL set): a Mini App (``web_app``) in private
chats on the person's own link, a ``startapp`` deep link in groups (Telegram allows no ``web_app``
button there: the fake Bot API refuses one as the real one does), and the web replay from ``/replay``.
G-1: no group message links to a person's view."""

from __future__ import annotations

import random
from urllib.parse import parse_qs, urlparse

from service.domain.identities import Room
from service.domain.weblinks import LinkClaims, open_link
from tests.adapters.telegram.fake_api import BOT_USERNAME
from tests.adapters.telegram.support import GROUP_ID, World, person, play_out, settings

WEB = "https://cards.example"
ANA = person(31, "Ana", "es")
BOB = person(32, "Bob", "en")


def _claims(url: str) -> LinkClaims:
    assert url.startswith(WEB + "/t?k="), url
    return open_link([b"tg-test"], parse_qs(urlparse(url).query)["k"][0], 0.0)


def _web_apps(w: World, chat: int) -> list[str]:
    return [b["web_app"]["url"] for m in w.fake.chat_messages(chat) for b in m.buttons() if "web_app" in b]


async def _table(w: World, chat: int, kind: str = "private") -> str:
    table = await w.tg.gateway.table_of(Room(platform="telegram", chat=str(chat), kind=kind))
    assert table is not None
    return table


async def test_a_private_match_opens_as_a_mini_app_on_the_persons_own_link_and_replays_on_the_web(fake_redis):
    async with World(fake_redis, service=settings(web_public_url=WEB)) as w:
        await w.say(BOB, "/play 535 hand_size=4 target=6")
        await w.quiet()
        table = await _table(w, BOB.id)
        shown, moves = w.move_buttons(BOB.id)
        [app] = [b["web_app"]["url"] for b in shown.buttons() if "web_app" in b]
        c = _claims(app)
        assert (c.platform, c.user, c.table) == ("telegram", str(BOB.id), table)
        assert moves, "the move buttons are still there, with the table's button after them"
        await play_out(w, [BOB], random.Random(5),
                       over=lambda: any(m.text.startswith("🏁") for m in w.fake.chat_messages(BOB.id)))
        await w.say(BOB, f"/replay {table}")
        await w.quiet()
        assert f"{WEB}/replay/{table}" in _web_apps(w, BOB.id)
        assert all(c.ok for c in w.fake.calls if c.chat == BOB.id)


async def test_g1_a_group_gets_a_startapp_link_and_each_player_their_own_mini_app(fake_redis):
    async with World(fake_redis, service=settings(web_public_url=WEB)) as w:
        for p in (ANA, BOB):
            await w.say(p, "/start")
        await w.start_in_group(ANA, "/new cinquillo players=2", [BOB])
        table = await _table(w, GROUP_ID, "group")
        urls = [b.get("url") for m in w.fake.chat_messages(GROUP_ID) for b in m.buttons()]
        assert f"https://t.me/{BOT_USERNAME}?startapp={table}" in urls
        # Nothing in the group opens a person's view: no web_app (refused there), no signed link.
        assert not _web_apps(w, GROUP_ID)
        assert not [u for u in urls if u and "k=" in u]
        assert all(c.ok for c in w.fake.calls if c.chat == GROUP_ID), "every call to the group succeeded"
        for p in (ANA, BOB):
            apps = _web_apps(w, p.id)
            assert apps, f"{p.first_name} got the table's button with their hand"
            for url in apps:
                c = _claims(url)
                assert (c.platform, c.user, c.table) == ("telegram", str(p.id), table)


async def test_without_the_web_table_no_button_points_to_it(fake_redis):
    async with World(fake_redis) as w:
        await w.say(BOB, "/play cinquillo")
        await w.quiet()
        buttons = [b for m in w.fake.chat_messages(BOB.id) for b in m.buttons()]
        assert buttons and not [b for b in buttons if "web_app" in b or "startapp" in (b.get("url") or "")]
